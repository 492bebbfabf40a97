// `prequal-hooks destinations`: the HTTP destinations an account's changes are POSTed to
// (docs/destinations.md), one subcommand a verb. A generated secret is printed once, by `add`; a
// URL's password and its query's values never are. A running serve takes every change within 2 seconds.
import { readFileSync } from 'node:fs';
import { DestinationRequestError } from '../destinations/errors.js';
import { describeAuth, parseHeader, type ClientTls, type OAuth2Client } from '../destinations/authentication.js';
import { parseFilter } from '../destinations/filter.js';
import { checkSecret } from '../destinations/signing.js';
import { networkPolicy, type NetworkRules } from '../destinations/network-policy.js';
import { checkBrokerRequest, checkUrl, openDestinations, type Destinations, type DestinationSummary } from '../destinations/registry.js';
import { isPostgresUrl, openStore } from '../store/open.js';
import type { QueuedSend } from '../destinations/sql.js';
import type { Store } from '../store/store.js';
import { accountStore } from './account-target.js';
import { CommandError, readFailure, UsageError, type CommandIo } from './args.js';
import { defineVerb, defineVerbs, type Command } from './command.js';
import { requireDatabaseFile } from './database.js';
import {
  ADD_OPTIONS,
  LIST_OPTIONS,
  networkRulesOf,
  REPLAY_OPTIONS,
  RETRY_OPTIONS,
  ROTATE_OPTIONS,
  SET_TLS_OPTIONS,
  STATE_OPTIONS,
} from './destinations-options.js';
import { databaseOf, type OptionTable, type ParsedCommand } from './options.js';
import { outputFormat, printJson, renderTable, shortInstant, type Column } from './output.js';

export const DESTINATIONS_HELP = `Usage: prequal-hooks destinations add --db <db> [--account <id>] --url <url> [--secret <s> | --secret-file <f>] [--filter <field=value>]… [--rate <n>/s] [--retry-schedule <delays>] [--after <seq>] [--json]
       prequal-hooks destinations add --db <db> [--account <id>] --url redis://host:port[/db] [--stream <name>] [--filter <field=value>]… [--retry-schedule <delays>] [--after <seq>] [--json]
       prequal-hooks destinations add --db <db> [--account <id>] --url nats://[user:password@]host:port --subject <subject> [--filter <field=value>]… [--retry-schedule <delays>] [--after <seq>] [--json]
       prequal-hooks destinations add --db <db> [--account <id>] --operational --url <url> [--secret <s> | --secret-file <f>] [--json]
       prequal-hooks destinations list --db <db> [--account <id>] [--destination <id>] [--json | --table]
       prequal-hooks destinations disable|enable|remove --db <db> [--account <id>] --destination <id>
       prequal-hooks destinations retry --db <db> [--account <id>] (--destination <id> [--change <seq>] | --all)
       prequal-hooks destinations replay --db <db> [--account <id>] --destination <id> --after <seq> [--until <seq>] [--json]
       prequal-hooks destinations rotate-secret --db <db> [--account <id>] --destination <id> [--secret <s> | --secret-file <f> | --signing hmac|ed25519] [--keep-previous 24h]
       prequal-hooks destinations set-tls --db <db> [--account <id>] --destination <id> --client-cert <f> --client-key <f> [--ca <f>]

An http(s) destination may also take --header 'Name: value' (repeatable), an OAuth2 client
(--oauth2-token-url <u> --oauth2-client-id <id> --oauth2-client-secret-file <f> [--oauth2-scope <s>]),
a client certificate (--client-cert <f> --client-key <f> [--ca <f>], https:// rediss:// tls://) and
--signing ed25519 (v1a: the receiver holds the public key only).

The URLs an account's changes (campaigns, candidates, credits) are POSTed to by serve, signed per
Standard Webhooks, in order per entity, retried on a schedule (docs/destinations.md); or the
Redis streams they are appended to (XADD, entry id <seq>-0), or the NATS JetStream subjects they
are published to (Nats-Msg-Id: their webhook-id), in seq order, retried and never set aside. A new destination receives the changes recorded after it was added (--after: from a seq
on, 0 for every change the feed keeps); an operational one (--operational) receives the account's
operator events instead: a destination paused, resumed or disabled, a delivery set aside.

add      registers a destination; without --secret, generates one (whsec_…) and prints it, once
list     every destination of the account: its state, lag, dead deliveries; never a secret;
         with --destination, that one and its dead deliveries
disable  stops delivering (changes keep coming in and are sent once it is enabled)
enable   delivers again (a destination paused by failures, or disabled by a 410, too)
remove   forgets the destination and its queue
retry    puts dead deliveries back in the queue, due now: one (--change), a destination's, or --all;
         a Redis or NATS destination (never dead) has its first queued change tried now
replay   sends again the changes with --after < seq <= --until that pass its filter, each with the
         webhook-id it had (a Redis stream skips those it holds)
rotate-secret  signs with a new secret at once, and with the previous one too for --keep-previous
         (each request then carries both signatures); without --secret, generates one, printed once;
         --signing ed25519 moves to v1a (the public key printed once; v1 goes on beside it meanwhile)
set-tls  replaces the client certificate and key (and --ca) of an https, rediss or tls destination

Secrets and the URL are stored encrypted under the accounts key (--accounts-key-file; on SQLite
<db>.accounts-key by default). Exits 1 when the account or destination is unknown, 2 when the
command is called wrongly.`;

const verb = <O extends OptionTable>(name: string, table: O, run: (command: ParsedCommand<O>, io: CommandIo) => Promise<number>) =>
  defineVerb('destinations', name, table, run);

const VERBS: Record<string, Command> = {
  add: verb('add', ADD_OPTIONS, add),
  list: verb('list', LIST_OPTIONS, list),
  disable: verb('disable', STATE_OPTIONS, (command, io) => setState(command, io, 'disabled')),
  enable: verb('enable', STATE_OPTIONS, (command, io) => setState(command, io, 'active')),
  remove: verb('remove', STATE_OPTIONS, remove),
  retry: verb('retry', RETRY_OPTIONS, retry),
  replay: verb('replay', REPLAY_OPTIONS, replay),
  'rotate-secret': verb('rotate-secret', ROTATE_OPTIONS, rotateSecret),
  'set-tls': verb('set-tls', SET_TLS_OPTIONS, setTls),
};

/** The verbs of `destinations`, each with its own --help (docs/cli.md prints them). */
export const DESTINATION_VERBS: readonly string[] = Object.keys(VERBS);

export const destinations: Command = defineVerbs(DESTINATIONS_HELP, VERBS);

type DatabaseCommand = ParsedCommand<Omit<typeof STATE_OPTIONS, 'json' | 'destination'>>;

/** Opens the store, checks the account, runs `work` on the destinations, closes. */
async function withDestinations<T>(
  command: ParsedCommand<OptionTable>,
  io: CommandIo,
  work: (destinations: Destinations, account: string, store: Store) => Promise<T>,
  network?: NetworkRules,
): Promise<T> {
  const database = command as unknown as DatabaseCommand;
  const { location, postgres } = databaseOf(database);
  requireDatabaseFile(location);
  const store = await openStore(location, postgres);
  const keyFile = (command.values as { 'accounts-key-file'?: string | undefined })['accounts-key-file'];
  try {
    const account = (await accountStore(store, location, database.values.account)).account;
    const opened = openDestinations(store, {
      ...(keyFile !== undefined && { keyFile }),
      ...(!isPostgresUrl(location) && { databaseFile: location }),
      onNotice: (message) => io.stderr.write(`prequal-hooks destinations: ${message}\n`),
      ...(network !== undefined && { network }),
    });
    return await work(opened, account, store);
  } catch (error) {
    if (error instanceof DestinationRequestError) throw new CommandError(error.message);
    throw error;
  } finally {
    await store.close();
  }
}

function destinationOf(values: { destination: string | undefined }): string {
  if (values.destination === undefined)
    throw new UsageError('--destination is required: the id add printed (destinations list shows them)');
  return values.destination;
}

async function add(command: ParsedCommand<typeof ADD_OPTIONS>, io: CommandIo): Promise<number> {
  const { values } = command;
  if (values.url === undefined) throw new UsageError('--url is required: where the changes are POSTed');
  const network = networkRulesOf(values, (option) =>
    command.sources[option].from === 'env' ? command.sources[option].name : `--${option}`,
  );
  let filter;
  try {
    // A literal address refused (169.254.169.254 in any spelling), before anything is opened.
    checkUrl(values.url, networkPolicy(network));
    checkBrokerRequest({ url: values.url, secret: values.secret, stream: values.stream, subject: values.subject, rate: values.rate });
    if (values.secret !== undefined) checkSecret(values.secret);
    filter = parseFilter(values.filter);
  } catch (error) {
    if (error instanceof DestinationRequestError) throw new UsageError(error.message);
    throw error;
  }
  const url = values.url;
  const authentication = authenticationOf(values);
  const added = await withDestinations(
    command,
    io,
    async (destinations, account) => {
      try {
        return await destinations.add({
          account,
          url,
          // Only when one was given: an operational destination is refused any filter, even an empty one.
          ...(values.filter.length > 0 && { filter }),
          ...(values.secret !== undefined && { secret: values.secret }),
          ...(values.stream !== undefined && { stream: values.stream }),
          ...(values.subject !== undefined && { subject: values.subject }),
          ...(values.rate !== undefined && { rate: values.rate }),
          ...(values['retry-schedule'] !== undefined && { schedule: values['retry-schedule'] }),
          ...(values.after !== undefined && { after: values.after }),
          ...(values.operational && { operational: true }),
          ...(values.signing !== undefined && { signing: values.signing }),
          ...authentication,
        });
      } catch (error) {
        // What was asked is wrong (the URL, the secret): a usage error, and nothing was stored.
        if (error instanceof DestinationRequestError) throw new UsageError(error.message);
        throw error;
      }
    },
    network,
  );
  if (values.json) printJson(io, added);
  else {
    io.stdout.write(
      `added destination ${added.destination} of account ${added.account}: ${added.url}${added.stream === undefined ? '' : `, stream ${added.stream}`}${added.subject === undefined ? '' : `, subject ${added.subject}`}\n`,
    );
    if (added.secret !== undefined) io.stdout.write(`its signing secret, shown once (give it to the receiver): ${added.secret}\n`);
    if (added.publicKey !== undefined)
      io.stdout.write(`its public key, shown once (give it to the receiver, which verifies v1a with it): ${added.publicKey}\n`);
  }
  return 0;
}

/** A PEM file's content; a missing or unreadable one is a usage error naming it. */
function pemFile(path: string | undefined, option: string): string | undefined {
  if (path === undefined) return undefined;
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new UsageError(`${option} ${path}: ${readFailure(error)}`);
  }
}

/** The client certificate, key and authorities the options name, read. */
function tlsOf(values: {
  'client-cert': string | undefined;
  'client-key': string | undefined;
  ca: string | undefined;
}): ClientTls | undefined {
  const cert = pemFile(values['client-cert'], '--client-cert');
  const key = pemFile(values['client-key'], '--client-key');
  const ca = pemFile(values.ca, '--ca');
  if (cert === undefined && key === undefined && ca === undefined) return undefined;
  return { ...(cert !== undefined && { cert }), ...(key !== undefined && { key }), ...(ca !== undefined && { ca }) };
}

/** The headers, OAuth2 client and TLS files of `add`, parsed and read; a wrong one is a usage error. */
function authenticationOf(values: ParsedCommand<typeof ADD_OPTIONS>['values']): {
  headers?: Array<[string, string]>;
  oauth2?: OAuth2Client;
  tls?: ClientTls;
} {
  const oauth2Options = ['oauth2-token-url', 'oauth2-client-id', 'oauth2-client-secret'] as const;
  const given = oauth2Options.filter((o) => values[o] !== undefined);
  if (given.length > 0 && given.length < 3)
    throw new UsageError('--oauth2-token-url, --oauth2-client-id and --oauth2-client-secret-file go together');
  if (values['oauth2-scope'] !== undefined && given.length === 0) throw new UsageError('--oauth2-scope goes with --oauth2-token-url');
  try {
    const headers = values.header.map(parseHeader);
    const tls = tlsOf(values);
    return {
      ...(headers.length > 0 && { headers }),
      ...(given.length === 3 && {
        oauth2: {
          tokenUrl: values['oauth2-token-url']!,
          clientId: values['oauth2-client-id']!,
          clientSecret: values['oauth2-client-secret']!,
          ...(values['oauth2-scope'] !== undefined && { scope: values['oauth2-scope'] }),
        },
      }),
      ...(tls !== undefined && { tls }),
    };
  } catch (error) {
    if (error instanceof DestinationRequestError) throw new UsageError(error.message);
    throw error;
  }
}

const COLUMNS: Array<Column<DestinationSummary>> = [
  { header: 'DESTINATION', value: (d) => d.destination },
  {
    header: 'URL',
    value: (d) => `${d.url}${d.stream === undefined ? '' : ` stream ${d.stream}`}${d.subject === undefined ? '' : ` subject ${d.subject}`}`,
    max: 70,
  },
  { header: 'TYPE', value: (d) => (d.kind === 'operational' ? `${d.type} (operational)` : d.type) },
  { header: 'AUTHENTICATION', value: (d) => describeAuth(d.auth), max: 60 },
  { header: 'STATE', value: (d) => (d.reason === null ? d.state : `${d.state} (${d.reason})`) },
  { header: 'LAG', value: (d) => d.lag, align: 'right' },
  { header: 'DEAD', value: (d) => d.dead, align: 'right' },
  { header: 'NEXT ATTEMPT (UTC)', value: (d) => (d.nextAttemptAt === null ? null : shortInstant(d.nextAttemptAt)) },
  { header: 'CREATED (UTC)', value: (d) => shortInstant(d.createdAt) },
];

const DEAD_SHOWN = 100;

async function list(command: ParsedCommand<typeof LIST_OPTIONS>, io: CommandIo): Promise<number> {
  const only = command.values.destination;
  const listed = await withDestinations(
    command,
    io,
    async (destinations, account): Promise<Array<DestinationSummary & { deadDeliveries?: QueuedSend[] }>> => {
      const all = await destinations.list(account);
      if (only === undefined) return all;
      const found = all.filter((d) => d.destination === only);
      if (found.length === 0)
        throw new CommandError(`account "${account}" has no destination "${only}" ("prequal-hooks destinations list" shows them)`);
      const dead = await destinations.dead(account, only, DEAD_SHOWN);
      return found.map((d) => ({ ...d, deadDeliveries: dead }));
    },
  );
  if (outputFormat(command.values, io) === 'json') printJson(io, { destinations: listed });
  else {
    io.stdout.write(`${renderTable(listed, COLUMNS)}\n`);
    const dead = listed[0]?.deadDeliveries ?? [];
    if (dead.length > 0) io.stdout.write(`\n${renderTable(dead, DEAD_COLUMNS)}\n`);
  }
  return 0;
}

const DEAD_COLUMNS: Array<Column<QueuedSend>> = [
  { header: 'DEAD SEQ', value: (d) => d.seq, align: 'right' },
  { header: 'ENTITY', value: (d) => `${d.entity} ${d.entity_id}`, max: 50 },
  { header: 'ATTEMPTS', value: (d) => d.attempts, align: 'right' },
  { header: 'LAST ERROR', value: (d) => d.last_error, max: 60 },
  { header: 'FAILED (UTC)', value: (d) => (d.failed_at === null ? null : shortInstant(d.failed_at)) },
];

async function setState(command: ParsedCommand<typeof STATE_OPTIONS>, io: CommandIo, state: 'active' | 'disabled'): Promise<number> {
  const destination = destinationOf(command.values);
  const summary = await withDestinations(command, io, (destinations, account) => destinations.setState(account, destination, state));
  if (command.values.json) printJson(io, summary);
  else
    io.stdout.write(
      `destination ${destination} ${state === 'active' ? 'enabled: it is delivered to' : 'disabled: nothing is sent to it'}\n`,
    );
  return 0;
}

async function remove(command: ParsedCommand<typeof STATE_OPTIONS>, io: CommandIo): Promise<number> {
  const destination = destinationOf(command.values);
  await withDestinations(command, io, (destinations, account) => destinations.remove(account, destination));
  if (command.values.json) printJson(io, { destination, removed: true });
  else io.stdout.write(`removed destination ${destination} and its queue\n`);
  return 0;
}

async function retry(command: ParsedCommand<typeof RETRY_OPTIONS>, io: CommandIo): Promise<number> {
  const { values } = command;
  if (values.all === (values.destination !== undefined))
    throw new UsageError('give --destination <id> (with --change <seq> for one change), or --all, one of them');
  if (values.all && values.change !== undefined) throw new UsageError('--change goes with --destination, not --all');
  const retried = await withDestinations(command, io, async (destinations, account) => {
    const ids = values.all ? (await destinations.list(account)).map((d) => d.destination) : [values.destination!];
    let n = 0;
    for (const id of ids) n += await destinations.retry(account, id, values.change);
    return n;
  });
  if (values.change !== undefined && retried === 0)
    throw new CommandError(
      `change ${values.change} is not a dead delivery of ${values.destination} (nor, for a Redis or NATS destination, a queued change)`,
    );
  if (values.json) printJson(io, { retried });
  // A Redis destination has no dead delivery: its retry makes its first queued change due now.
  else io.stdout.write(`${retried} ${retried === 1 ? 'delivery' : 'deliveries'} due again now\n`);
  return 0;
}

async function replay(command: ParsedCommand<typeof REPLAY_OPTIONS>, io: CommandIo): Promise<number> {
  const { values } = command;
  const destination = destinationOf(values);
  if (values.after === undefined)
    throw new UsageError('--after is required: the seq after which changes are sent again (0: from the oldest kept)');
  const range = { after: values.after, ...(values.until !== undefined && { until: values.until }) };
  if (range.until !== undefined && range.until < range.after)
    throw new UsageError(`--until (${range.until}) must not be below --after (${range.after})`);
  const queued = await withDestinations(command, io, (destinations, account) => destinations.replay(account, destination, range));
  if (values.json) printJson(io, { queued });
  else io.stdout.write(`${queued} ${queued === 1 ? 'change' : 'changes'} queued again for ${destination}, due now\n`);
  return 0;
}

async function rotateSecret(command: ParsedCommand<typeof ROTATE_OPTIONS>, io: CommandIo): Promise<number> {
  const { values } = command;
  const destination = destinationOf(values);
  try {
    if (values.secret !== undefined) checkSecret(values.secret);
  } catch (error) {
    if (error instanceof DestinationRequestError) throw new UsageError(error.message);
    throw error;
  }
  const rotated = await withDestinations(command, io, (destinations, account) =>
    destinations.rotateSecret(account, destination, {
      ...(values.secret !== undefined && { secret: values.secret }),
      ...(values.signing !== undefined && { signing: values.signing }),
      keepPreviousMs: values['keep-previous'],
    }),
  );
  if (values.json) printJson(io, { destination, ...rotated });
  else {
    io.stdout.write(
      `destination ${destination}: the new secret signs now${rotated.previousUntil === null ? '' : `; the previous one too, until ${rotated.previousUntil}`}\n`,
    );
    if (rotated.secret !== undefined) io.stdout.write(`its new signing secret, shown once (give it to the receiver): ${rotated.secret}\n`);
    if (rotated.publicKey !== undefined)
      io.stdout.write(`its new public key, shown once (give it to the receiver, which verifies v1a with it): ${rotated.publicKey}\n`);
  }
  return 0;
}

async function setTls(command: ParsedCommand<typeof SET_TLS_OPTIONS>, io: CommandIo): Promise<number> {
  const { values } = command;
  const destination = destinationOf(values);
  if (values['client-cert'] === undefined || values['client-key'] === undefined)
    throw new UsageError('--client-cert and --client-key are required: the new certificate and its private key');
  const tls = tlsOf(values)!;
  const summary = await withDestinations(command, io, async (destinations, account) => {
    try {
      return await destinations.setTls(account, destination, tls);
    } catch (error) {
      if (error instanceof DestinationRequestError) throw new UsageError(error.message);
      throw error;
    }
  });
  if (values.json) printJson(io, summary);
  else
    io.stdout.write(`destination ${destination}: ${describeAuth(summary.auth)}; a running receiver presents it from its next round on\n`);
  return 0;
}
