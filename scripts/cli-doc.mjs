#!/usr/bin/env node
// Writes docs/cli.md from the commands themselves (dist/cli/commands.js): the usage, then each
// command's --help, which its option table makes, as `prequal-hooks <command> --help` prints it.
// `npm run docs` rewrites it; a test fails when the page and the commands disagree.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ACCOUNT_VERBS } from '../dist/cli/accounts.js';
import { COMMANDS, USAGE } from '../dist/cli/commands.js';
import { DESTINATION_VERBS } from '../dist/cli/destinations.js';

const OUT = fileURLToPath(new URL('../docs/cli.md', import.meta.url));

/** What `run(argv)` prints on stdout, with an empty environment so that nothing of this shell leaks in. */
async function printed(run, argv) {
  let text = '';
  const stdout = { write: (chunk) => ((text += String(chunk)), true), isTTY: false };
  const code = await run(argv, { stdout, stderr: { write: () => true }, env: {} });
  if (code !== 0) throw new Error(`${argv.join(' ')} exited ${code}`);
  return text.trimEnd();
}

const block = (text) => `\`\`\`text\n${text}\n\`\`\``;

export async function renderCliDoc() {
  const sections = [];
  for (const [name, { load, summary }] of Object.entries(COMMANDS)) {
    const run = await load();
    const parts = [`## \`${name}\``, `${summary[0].toUpperCase()}${summary.slice(1)}.`, block(await printed(run, ['--help']))];
    if (name === 'serve')
      parts.splice(2, 0, 'Every option as a table, with its variables and its default: [configuration.md](configuration.md).');
    if (name === 'accounts')
      for (const verb of ACCOUNT_VERBS) parts.push(`### \`accounts ${verb}\``, block(await printed(run, [verb, '--help'])));
    if (name === 'destinations')
      for (const verb of DESTINATION_VERBS) parts.push(`### \`destinations ${verb}\``, block(await printed(run, [verb, '--help'])));
    sections.push(parts.join('\n\n'));
  }
  return `# The command line

Generated from the commands' help texts and option tables (\`npm run docs\`); \`prequal-hooks
<command> --help\` prints the same.

${block(USAGE)}

What every command shares:

- **The database.** A command that works on a database takes \`--db <path|url>\` (a SQLite file, or
  a \`postgres://\` URL), else the \`PREQUAL_HOOKS_DB\` variable, else \`./data/prequal-hooks.db\`; and
  \`--schema <name>\` (or \`PREQUAL_HOOKS_SCHEMA\`) for a PostgreSQL database whose tables are not in
  \`public\`. Those that read or write an account's rows take \`--account <id>\` (the default account
  without it; [accounts.md](accounts.md)). \`inspect\`, \`dead-letters\` and \`secret\` open the
  database read-only, so they are safe beside a running \`serve\`, and never create a database: a
  wrong path is an error.
- **The environment.** Options can be given as environment variables, named in brackets in each
  help; a flag wins over its variable, and an error in a value taken from the environment names
  the variable (\`PORT must be a whole number…\`).
- **Output.** Data goes to stdout, messages go to stderr.
- **Exit codes.** \`0\` success; \`1\` the command failed (one line says why: a wrong \`--host\`, a port
  in use, a folder that cannot be created; \`PREQUAL_HOOKS_DEBUG=1\` adds the stack of an
  unexpected failure); \`2\` the command was called wrongly (one line on stderr in plain words,
  such as \`--limit needs a value\`, then run \`prequal-hooks <command> --help\`).

${sections.join('\n\n')}
`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(OUT, await renderCliDoc());
  console.log(`wrote ${OUT}`);
}
