// Who projects the events a command writes (replay, dead-letters reprocess): a receiver running on
// the database, so that its handlers run for them as for webhooks; or, when none runs (or with
// --project-here), this process, as for an offline database.
import { MISSED_BEATS, receiversOn } from '../store/presence.js';
import type { PresencePort } from '../store/write-ports.js';
import type { ReceiverRow } from '../store/rows.js';
import { flag } from './options.js';

/** The option of the commands that hand their events to a running receiver. */
export const PROJECT_HERE_OPTION = flag({
  help: 'project in this process even when a receiver runs on the database (its handlers then do not run for these events)',
});

export interface Ownership {
  /** The running receiver the events are left to; undefined: this process projects them. */
  owner: ReceiverRow | undefined;
  /** For the person on stderr: a running receiver passed over, or one counted gone. */
  note: string | undefined;
}

const seconds = (ms: number) => `${Number((ms / 1000).toFixed(1))} s`;
const named = (r: ReceiverRow) => `pid ${r.pid} on host ${r.host}`;

/** `the running receiver (pid 1234 on host web-1)`, as summaries name it. */
export function ownerText(owner: ReceiverRow): string {
  return `the running receiver (${named(owner)})`;
}

/** The owner as `--json` shows it: null when this process projected. */
export function ownerJson(owner: ReceiverRow | undefined): { receiver_id: string; pid: number; host: string; started_at: string } | null {
  return owner === undefined ? null : { receiver_id: owner.receiver_id, pid: owner.pid, host: owner.host, started_at: owner.started_at };
}

/** Which process projects: the most recently seen running receiver, unless `projectHere`. */
export async function ownershipOf(store: Pick<PresencePort, 'receivers'>, projectHere: boolean): Promise<Ownership> {
  const { running, gone } = await receiversOn(store);
  const live = running[0];
  if (projectHere) {
    return {
      owner: undefined,
      note: live && `--project-here: projected in this process; ${ownerText(live)} does not run its handlers for these events`,
    };
  }
  if (live !== undefined) return { owner: live, note: undefined };
  const last = gone[0];
  return {
    owner: undefined,
    note:
      last &&
      `a receiver on this database (${named(last)}) was last seen ${seconds(last.age_ms)} ago, more than ${MISSED_BEATS} of its ` +
        `${seconds(last.every_ms)} heartbeats: it is not counted as running, so the events were projected here and its handlers do not run for them`,
  };
}
