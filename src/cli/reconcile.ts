import { existsSync } from 'node:fs';
import { PrequalApiError, PrequalNetworkError, PrequalRedirectError, PrequalResponseError } from '../client/errors.js';
import { reconcileInto, type ReconcileReport, type Repair } from '../reconcile/index.js';
import { isPostgresUrl, openStore } from '../store/open.js';
import { CommandError } from './args.js';
import { accountStore, refuseAccountOfNoDatabase } from './account-target.js';
import { databaseOf, ACCOUNT_OPTIONS, databaseOptions, flag, flagsOnly, list, optionsHelp } from './options.js';
import { defineCommand } from './command.js';
import { SERVICE_OPTIONS, serviceClient } from './service.js';
import { displayLocation } from './database.js';
import { count } from '../words.js';
import { printJson } from './output.js';
import { resolveFileVariants, withFileVariants } from './file-variants.js';

// --api-key-file (PREQUAL_HOOKS_API_KEY_FILE) as serve takes it: a key file keeps the key out of
// the process list and the environment of a cron job.
export const RECONCILE_OPTIONS = withFileVariants({
  ...databaseOptions('creates'),
  ...ACCOUNT_OPTIONS,
  ...SERVICE_OPTIONS,
  ...flagsOnly({
    campaign: list({
      placeholder: '<id>',
      help: "also read this campaign (repeat for several); the projection's campaigns are always read",
    }),
    'dry-run': flag({ help: 'print the differences, write nothing (a missing database is not created)' }),
    json: flag({ help: 'print the report as JSON' }),
  }),
});

export const RECONCILE_HELP = `Usage: prequal-hooks reconcile --api-url <url> [options]

Reads the service's own state (each campaign's status and candidate list, the credits) and
repairs what the webhooks missed: candidates that never arrived, statuses, scores and summaries,
campaign status and credits. Each repair is written into the inbox as a reconcile.* event
stamped with the time of the reading, so webhooks older than the reading do not undo it and
newer ones still win. A second run finds nothing to repair. An interrupted run resumes at the
campaign it stopped at. Requests are spaced within the service's limits (60/min, 1,000/h).

${optionsHelp(RECONCILE_OPTIONS)}

Names, e-mails and phones are never printed: their differences show as [differs].`;

// Candidate PII stays out of terminals and the logs they end up in.
const PII = new Set(['first_name', 'last_name', 'email', 'phone']);
const shown = (field: string, value: unknown) => (PII.has(field) && value !== null ? '[differs]' : value);

function printable(repair: Repair) {
  const fields: Record<string, { projected: unknown; service: unknown }> = {};
  for (const [field, { projected, service }] of Object.entries(repair.fields))
    fields[field] = { projected: shown(field, projected), service: shown(field, service) };
  return { ...repair, fields };
}

function describe(report: ReconcileReport): string {
  const lines: string[] = [];
  for (const campaign of report.campaigns) {
    if (!campaign.found) {
      lines.push(`campaign ${campaign.campaign_id}: not found at the service (left as projected)`);
      continue;
    }
    const mine = report.repairs.filter(
      (r) => (r.table === 'campaigns' && r.key === campaign.campaign_id) || r.campaign_id === campaign.campaign_id,
    );
    const candidates = mine.filter((r) => r.table === 'candidates');
    const missing = candidates.filter((r) => r.missing).length;
    const changed = candidates.filter((r) => !r.missing);
    const changedFields = [...new Set(changed.flatMap((r) => Object.keys(r.fields)))];
    const parts: string[] = [`${count(campaign.candidatesRead, 'candidate')} read`];
    if (missing > 0) parts.push(`${missing} missing`);
    if (changed.length > 0) parts.push(`${changed.length} changed (${changedFields.join(', ')})`);
    const own = mine.find((r) => r.table === 'campaigns');
    if (own !== undefined) parts.push(`campaign ${own.missing ? 'missing' : `changed (${Object.keys(own.fields).join(', ')})`}`);
    if (campaign.onlyInProjection.length > 0)
      parts.push(`${campaign.onlyInProjection.length} projected but not listed by the service (left as they are)`);
    if (campaign.erasedButListed.length > 0)
      parts.push(
        `${count(campaign.erasedButListed.length, 'candidate')} erased here but still listed by the service (not recreated: ask the service to delete them)`,
      );
    if (mine.length === 0) parts.push('in agreement');
    lines.push(`campaign ${campaign.campaign_id}: ${parts.join(', ')}`);
  }
  const credits = report.repairs.find((r) => r.table === 'credits');
  if (credits !== undefined) {
    const { projected, service } = credits.fields.credits_remaining!;
    lines.push(
      `credits: ${projected == null ? 'none projected yet' : `${JSON.stringify(projected)} projected`}, ${JSON.stringify(service)} at the service`,
    );
  }
  const rows = report.repairs.length;
  lines.push(
    report.dryRun
      ? `dry run: ${count(rows, 'row')} ${rows === 1 ? 'differs' : 'differ'}; nothing written`
      : rows === 0
        ? 'nothing to repair'
        : `repaired ${count(rows, 'row')} (${count(report.written, 'reconcile event')} written)`,
  );
  return lines.join('\n');
}

export const reconcile = defineCommand({
  options: RECONCILE_OPTIONS,
  help: RECONCILE_HELP,
  async run(parsed, io) {
    const command = resolveFileVariants(RECONCILE_OPTIONS, parsed);
    const { values } = command;
    const { client, apiUrl } = serviceClient(values);
    const { location, postgres } = databaseOf(command);
    const dryRun = values['dry-run'];
    // State built from the service alone starts from no database: created as serve does; a dry
    // run, which writes nothing, compares with an empty one in memory instead.
    refuseAccountOfNoDatabase(location, values.account);
    const fresh = !isPostgresUrl(location) && !existsSync(location);
    if (fresh)
      io.stderr.write(
        `prequal-hooks reconcile: no database at ${location}; ${dryRun ? 'comparing with an empty one (a dry run creates nothing)' : 'creating it'}\n`,
      );

    // Ctrl-C stops after the campaign being read; the next run resumes there.
    const stop = new AbortController();
    // A second one stops at once: what the finished campaigns repaired is committed already, and
    // the campaign being read is read again next time.
    const onSignal = () => {
      if (!stop.signal.aborted) {
        stop.abort();
        io.stderr.write('prequal-hooks reconcile: stopping after the campaign being read (Ctrl-C again to stop now).\n');
        return;
      }
      io.stderr.write('prequal-hooks reconcile: stopped; run it again to go on from where it stopped.\n');
      process.exit(130);
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    const opened = await openStore(fresh && dryRun ? ':memory:' : location, fresh && dryRun ? {} : postgres);
    let report: ReconcileReport;
    try {
      const store = await accountStore(opened, location, values.account);
      report = await reconcileInto(
        { store },
        {
          client,
          ...(values.campaign.length > 0 && { campaigns: values.campaign }),
          dryRun,
          signal: stop.signal,
          onProgress: ({ campaign, done, total }) =>
            io.stderr.write(`prequal-hooks reconcile: campaign ${campaign} read (${done} of ${total})\n`),
        },
      );
    } catch (error) {
      if (error instanceof PrequalApiError)
        throw new CommandError(
          `the service answered ${error.status} ${error.code}: ${error.message}${error.status === 401 ? ' (check the API key)' : ''}. Run again to resume`,
        );
      if (error instanceof PrequalNetworkError)
        throw new CommandError(`cannot reach the service at ${apiUrl}: ${error.message}. Run again to resume`);
      if (error instanceof PrequalRedirectError || error instanceof PrequalResponseError) throw new CommandError(error.message);
      throw error;
    } finally {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      await opened.close();
    }
    if (values.json) printJson(io, { ...report, repairs: report.repairs.map(printable), database: displayLocation(location) });
    else io.stdout.write(`${describe(report)}\n`);
    if (report.interrupted) {
      io.stderr.write('prequal-hooks reconcile: interrupted; run it again to go on from where it stopped.\n');
      return 130;
    }
    return 0;
  },
});
