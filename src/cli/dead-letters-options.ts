// The options and the help of `dead-letters` (the list) and `dead-letters reprocess`: one help for both.
import { integer } from './args.js';
import { ACCOUNT_OPTIONS, databaseOptions, flag, flagsOnly, FORMAT_OPTIONS, optionsHelp, value } from './options.js';
import { PROJECT_HERE_OPTION } from './owner.js';

/** The list's options. */
export const LIST_OPTIONS = {
  ...databaseOptions('must exist'),
  ...ACCOUNT_OPTIONS,
  ...flagsOnly({
    limit: value({
      placeholder: '<n>',
      help: 'list: at most n of each',
      default: 1000,
      defaultHelp: '1000',
      parse: (text: string, name: string) => integer(name, text, 1000, 1),
    }),
  }),
  ...FORMAT_OPTIONS,
};

/** What `reprocess` takes besides the database and the format. */
const REPROCESS_ONLY_OPTIONS = flagsOnly({
  all: flag({ help: 'reprocess: every event dead letter' }),
  'project-here': { ...PROJECT_HERE_OPTION, help: `reprocess: ${PROJECT_HERE_OPTION.help}` },
});

const { limit: _listOnly, ...REPROCESS_LIST_OPTIONS } = LIST_OPTIONS;
/** `reprocess`'s options: the list's, but --limit, and its own. */
export const REPROCESS_OPTIONS = { ...REPROCESS_LIST_OPTIONS, ...REPROCESS_ONLY_OPTIONS };

export const DEAD_LETTERS_HELP = `Usage: prequal-hooks dead-letters [options]
       prequal-hooks dead-letters reprocess (--all | <inbox id>...) [options]

Lists what was set aside (read-only): events of a kind this version does not know
(unknown), events whose data or envelope did not validate (dead), with the reasons, and
application handlers that kept failing. "reprocess" puts events back in the work list: after
an upgrade that knows the kind, or once the stored body was mended. A receiver running on the
database (one whose heartbeat there is recent: "prequal-hooks serve", an application's
createReceiver) then projects them and runs its handlers; when none runs, or with
--project-here, this process processes them now (no handlers run). Bodies that are not event
envelopes can be listed, not reprocessed.

${optionsHelp({ ...LIST_OPTIONS, ...REPROCESS_ONLY_OPTIONS })}

JSON of the list: {"events": [{type: "event", inbox_id, state, kind, verdict, received_at,
reasons: [{path, message}], body}], "handler_failures": [{type: "handler", failure_id,
inbox_id, handler, error, attempts, failed_at}]}.
JSON of reprocess: {"requeued": [ids], "skipped": [{inbox_id, reason}],
"results": [{inbox_id, kind, before, after, reasons}], "projectedBy": "owner" or "here",
"owner": {receiver_id, pid, host, started_at} or null}; left to a running receiver, "after"
is the state when the command ended (usually "pending").`;
