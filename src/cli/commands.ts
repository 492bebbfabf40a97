// The commands of prequal-hooks, their one-line summaries and the usage printed by
// `prequal-hooks --help`: main.ts routes through this table, scripts/cli-doc.mjs writes docs/cli.md from it.
import type { Command } from './command.js';

// Each command is imported when it runs, so that `inspect` or `secret` do not load the HTTP stack.
export const COMMANDS: Record<string, { load: () => Promise<Command>; summary: string }> = {
  serve: { load: async () => (await import('./serve.js')).serve, summary: 'run the standalone webhook receiver' },
  replay: { load: async () => (await import('./replay.js')).replay, summary: 'feed .json/.ndjson event files into the database' },
  send: { load: async () => (await import('./send.js')).send, summary: 'sign and POST a sample event (or a file) to a receiver' },
  inspect: {
    load: async () => (await import('./inspect.js')).inspect,
    summary: 'show campaigns, candidates by score, credits and inbox counts',
  },
  'dead-letters': {
    load: async () => (await import('./dead-letters.js')).deadLetters,
    summary: 'list events set aside and failed handlers; reprocess them',
  },
  secret: {
    load: async () => (await import('./secret.js')).secret,
    summary: 'print the webhook secret serve generated, or the fingerprints of secrets',
  },
  rebuild: { load: async () => (await import('./rebuild.js')).rebuild, summary: 're-project the whole inbox into fresh projection tables' },
  reconcile: {
    load: async () => (await import('./reconcile.js')).reconcile,
    summary: "repair what webhooks missed from the service's API (candidates, statuses, credits)",
  },
  sandbox: {
    load: async () => (await import('./sandbox.js')).sandbox,
    summary: 'run the service locally: its REST API, a simulated campaign life, real webhooks',
  },
  erase: {
    load: async () => (await import('./erase.js')).erase,
    summary: "erase a candidate's personal data everywhere (GDPR article 17)",
  },
  export: {
    load: async () => (await import('./export.js')).exportCommand,
    summary: 'print everything held about one candidate as JSON (GDPR article 15)',
  },
  changes: {
    load: async () => (await import('./changes.js')).changes,
    summary: "print an account's changes (campaigns, candidates, credits) after a cursor; --follow for new ones",
  },
  backup: { load: async () => (await import('./backup.js')).backup, summary: 'copy a SQLite database safely while serve writes to it' },
  copy: {
    load: async () => (await import('./copy.js')).copy,
    summary: 'copy every account into an empty database of the other engine (SQLite to PostgreSQL, or back)',
  },
  dump: {
    load: async () => (await import('./dump.js')).dump,
    summary: "write an account's stored events as received, one a line, in the form replay reads",
  },
  migrate: {
    load: async () => (await import('./migrate.js')).migrateCommand,
    summary: 'list and apply the schema migrations a database needs',
  },
  accounts: {
    load: async () => (await import('./accounts.js')).accounts,
    summary: 'add, list, disable, remove the agency accounts served; rotate their secrets',
  },
  destinations: {
    load: async () => (await import('./destinations.js')).destinations,
    summary: "POST an account's changes to HTTP destinations, signed: add, list, disable, retry",
  },
};

export const USAGE = `Usage: prequal-hooks <command> [options]

Commands:
${Object.entries(COMMANDS)
  .map(([name, { summary }]) => `  ${name.padEnd(14)} ${summary}`)
  .join('\n')}

Run "prequal-hooks <command> --help" for a command's options, "prequal-hooks --version" for the version.`;
