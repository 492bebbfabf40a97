import { readFile } from 'node:fs/promises';
import { EVENT_KINDS, parseInstant } from '../events/index.js';
import { DEFAULT_EVENT_HEADER, DEFAULT_SIGNATURE_HEADER } from '../receive/intake.js';
import { signedRequest } from '../testing/signed-request.js';
import { CommandError, integer, UsageError, webhookUrl, type CommandIo } from './args.js';
import { databaseOf, databaseOptions, flagsOnly, list, optional, optionsHelp, value, type ParsedCommand } from './options.js';
import { defineCommand } from './command.js';
import { ACCOUNTS_KEY_OPTIONS } from './accounts-options.js';
import { DEFAULT_ACCOUNT } from '../receive/account.js';
import { readAccountTarget } from './account-target.js';
import { sampleToSend } from './sample.js';
import { certificateProblem, post, trustedWith, type Answer } from './send-http.js';

export const SEND_OPTIONS = {
  ...flagsOnly({
    url: optional({ placeholder: '<url>', help: "the receiver's webhook URL, e.g. http://127.0.0.1:8787/webhooks (required)" }),
  }),
  secret: list({
    placeholder: '<s>',
    help: 'shared secret to sign with (the first of a comma-separated list); without one the event is sent unsigned',
    secret: true,
  }),
  ...flagsOnly({
    set: list({
      placeholder: '<path>=<value>',
      help: 'change a field of the sample (repeatable), e.g. data.interview_score=9.5, data.first_name=Zoé, timestamp=2026-11-20T10:00:00Z; the value is read as JSON when it parses (9.5, true, null, "42", {...}), as text otherwise',
    }),
    file: optional({ placeholder: '<path>', help: 'send this file instead of a sample (its bytes are not changed)' }),
    'signature-header': value({
      placeholder: '<h>',
      help: 'the signature header',
      default: DEFAULT_SIGNATURE_HEADER,
      defaultHelp: DEFAULT_SIGNATURE_HEADER,
      parse: (text: string) => text,
    }),
    'event-header': value({
      placeholder: '<h>',
      help: 'the event kind header',
      default: DEFAULT_EVENT_HEADER,
      defaultHelp: DEFAULT_EVENT_HEADER,
      parse: (text: string) => text,
    }),
    timeout: value({
      placeholder: '<ms>',
      help: 'give up waiting for the answer after this long',
      default: 10_000,
      defaultHelp: '10000',
      parse: (text: string, name: string) => integer(name, text, 10_000, 1),
    }),
  }),
  ca: optional({
    placeholder: '<file>',
    help: "PEM file of CA certificates to trust, beside Node's own, for an https:// receiver whose certificate comes from a private CA (NODE_EXTRA_CA_CERTS works too)",
  }),
  ...flagsOnly({
    account: optional({
      placeholder: '<id>',
      help: "send to this account of the registry: its webhook path appended to --url (the receiver's /webhooks), signed with its current secret read from --db with the accounts key",
    }),
  }),
  ...databaseOptions('must exist'),
  ...ACCOUNTS_KEY_OPTIONS,
};

export const SEND_HELP = `Usage: prequal-hooks send <kind> --url <url> [--set <path>=<value>]... [options]
       prequal-hooks send --file <path> --url <url> [options]
       prequal-hooks send <kind> --url <url>/webhooks --account <id> --db <path|url> [options]

Signs and POSTs one event to a receiver, like the test button of the agency dashboard:
a realistic sample of the kind (timestamped now), or a file sent byte for byte.

${optionsHelp(SEND_OPTIONS)}

Kinds: ${EVENT_KINDS.join(', ')}.

Prints the HTTP status and the receiver's answer; exits 0 on 2xx, 1 otherwise.`;

/** The kind a file claims, for the event header; the bytes themselves are sent as they are. */
function kindOf(bytes: Buffer): string | undefined {
  try {
    const body = JSON.parse(bytes.toString('utf8')) as { event?: unknown };
    return typeof body?.event === 'string' ? body.event : undefined;
  } catch {
    return undefined;
  }
}

async function readBody(path: string): Promise<Buffer> {
  try {
    return await readFile(path);
  } catch (error) {
    throw new CommandError(`cannot read ${path}: ${(error as Error).message}`);
  }
}

export const send = defineCommand({
  options: SEND_OPTIONS,
  help: SEND_HELP,
  positionals: true,
  async run(command, io) {
    const { values, positionals } = command;
    const [kind, ...extra] = positionals;
    if (extra.length > 0) throw new UsageError(`one event at a time: unexpected "${extra.join(' ')}"`);
    if (kind === undefined && values.file === undefined)
      throw new UsageError('give an event kind (such as candidate.added) or --file <path>');
    if (kind !== undefined && values.file !== undefined) throw new UsageError('give an event kind or --file, not both');
    if (values.file !== undefined && values.set.length > 0) throw new UsageError('--set changes a sample; a --file is sent byte for byte');
    const event = kind === undefined ? undefined : sampleToSend(kind, values.set, Date.now());
    if (values.url === undefined) throw new UsageError("--url is required: the receiver's webhook URL");
    const target =
      values.account === undefined || values.account === DEFAULT_ACCOUNT ? undefined : await accountTarget(command, values.account, io);
    const url = webhookUrl('--url', target === undefined ? values.url : `${values.url.replace(/\/+$/, '')}/${target.routeKey}`);
    const timeoutMs = values.timeout;
    const secret = values.secret[0] ?? target?.secret;
    const headerNames = {
      signatureHeader: values['signature-header'],
      eventHeader: values['event-header'],
    };

    let request;
    if (event === undefined) {
      const bytes = await readBody(values.file!);
      request = signedRequest(bytes, { ...headerNames, ...(secret !== undefined && { secret }) });
      const claimed = kindOf(bytes);
      if (claimed !== undefined) request.headers[headerNames.eventHeader.toLowerCase()] = claimed;
    } else {
      if (typeof event.timestamp !== 'string' || parseInstant(event.timestamp) === null) {
        io.stderr.write(
          `prequal-hooks send: warning: timestamp ${JSON.stringify(event.timestamp)} is not ISO 8601 with a zone; the receiver will keep the event as a dead letter.\n`,
        );
      }
      request = signedRequest(event, { ...headerNames, ...(secret !== undefined && { secret }) });
    }
    if (secret === undefined) {
      io.stderr.write(
        'prequal-hooks send: warning: no secret (--secret or PREQUAL_HOOKS_SECRET), so the event is sent unsigned; a receiver with a secret answers 401.\n',
      );
    }

    const caSource = command.sources.ca;
    const trusted = values.ca === undefined ? undefined : trustedWith(values.ca, caSource.from === 'default' ? '--ca' : caSource.name);
    const answer = await exchange(url, request, timeoutMs, trusted);
    io.stdout.write(
      `HTTP ${answer.status} ${answer.statusText}\n${answer.text}${answer.text.endsWith('\n') || answer.text === '' ? '' : '\n'}`,
    );
    return answer.status >= 200 && answer.status < 300 ? 0 : 1;
  },
});

/** An account's route key and current secret, from the registry of --db opened with the accounts key. */
async function accountTarget(
  command: ParsedCommand<typeof SEND_OPTIONS>,
  account: string,
  io: CommandIo,
): Promise<{ routeKey: string; secret: string }> {
  const target = await readAccountTarget(
    databaseOf(command),
    { account, keyFile: command.values['accounts-key-file'], command: 'send' },
    io,
  );
  const secret = target.secrets[0];
  if (secret === undefined) throw new CommandError(`account "${account}" has no secret to sign with`);
  return { routeKey: target.routeKey, secret };
}

/** The POST, its failures in words: a timeout, a refused certificate, or a receiver not reached. */
async function exchange(url: URL, request: ReturnType<typeof signedRequest>, timeoutMs: number, ca: string[] | undefined): Promise<Answer> {
  try {
    return await post(url, request, timeoutMs, ca);
  } catch (error) {
    if ((error as Error).name === 'TimeoutError') throw new CommandError(`no answer from ${url.href} within ${timeoutMs} ms`);
    const certificate = certificateProblem(error, url);
    if (certificate !== undefined) throw new CommandError(certificate);
    const cause = (error as { cause?: { message?: string } }).cause?.message ?? (error as Error).message;
    throw new CommandError(`could not reach ${url.href}: ${cause}. Is the receiver running there?`);
  }
}
