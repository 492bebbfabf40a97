#!/usr/bin/env node
// Writes docs/configuration.md from serve's option table (dist/cli/serve-options.js): every
// option with its environment variables, its file variant and its default. `npm run docs`
// rewrites it; a test fails when the page and the table disagree.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { envNames } from '../dist/cli/options.js';
import { SERVE_OPTIONS } from '../dist/cli/serve-options.js';

const OUT = fileURLToPath(new URL('../docs/configuration.md', import.meta.url));
const cell = (text) => String(text).replace(/\|/g, '\\|').replace(/\n/g, ' ');

export function renderConfigurationDoc() {
  const rows = Object.entries(SERVE_OPTIONS).map(([name, spec]) => {
    const flag = cell(`\`--${name}${spec.placeholder === undefined ? '' : ` ${spec.placeholder}`}\``);
    const env = envNames(name, spec);
    const variables = env.length === 0 ? '—' : env.map((v) => `\`${v}\``).join(', ');
    const fallback = spec.kind === 'value' && spec.defaultHelp !== undefined ? cell(spec.defaultHelp) : spec.kind === 'flag' ? 'off' : '—';
    return `| ${flag} | ${variables} | ${fallback} | ${spec.secret ? 'yes' : ''} | ${cell(spec.help)} |`;
  });
  return `# Configuration of \`prequal-hooks serve\`

Generated from the command's option table (\`npm run docs\`); \`prequal-hooks serve --help\` prints
the same. Every option can be given as a flag, as an environment variable, or, for secrets, as a
file (\`--<option>-file\`, or the variable with \`_FILE\` appended: one value a line, e.g. several
webhook secrets during a rotation). A flag wins over a variable. \`prequal-hooks serve
--print-config\` prints the effective configuration as JSON, each value with where it came from,
secrets masked, and exits 0. An error names the variable when the value came from one.

| option | environment | default | secret | what it does |
|---|---|---|---|---|
${rows.join('\n')}
`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(OUT, renderConfigurationDoc());
  console.log(`wrote ${OUT}`);
}
