#!/usr/bin/env node
// Writes docs/events.md from the zod schemas the receiver validates with (dist/events/schemas.js):
// the fields of each kind in a form people read. `npm run docs` rewrites it; a test fails when the
// file and the schemas disagree, so the page cannot drift from the code.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { KIND_RANKS, reconcileDataSchemas, serviceDataSchemas } from '../dist/events/schemas.js';

const OUT = fileURLToPath(new URL('../docs/events.md', import.meta.url));

// A JSON Schema's alternatives, one type each: `anyOf` and `type: [a, b]` alike.
function variantsOf(schema) {
  return (schema.anyOf ?? [schema]).flatMap((v) => (Array.isArray(v.type) ? v.type.map((type) => ({ ...v, type })) : [v]));
}

function typeOf(schema) {
  const variants = variantsOf(schema);
  const nullable = variants.some((v) => v.type === 'null');
  const shown = variants
    .filter((v) => v.type !== 'null')
    .map((v) => {
      if (v.enum) return v.enum.map((e) => `\`${e}\``).join(' \\| ');
      if (v.type === 'array') return `array of objects (below)`;
      if (v.type === 'integer') return `integer${v.minimum !== undefined ? ` ≥ ${v.minimum}` : ''}`;
      if (v.type === 'number') return v.minimum !== undefined && v.maximum !== undefined ? `number ${v.minimum} to ${v.maximum}` : 'number';
      if (v.type === 'string') return v.minLength ? 'string (not empty)' : 'string';
      return v.type ?? 'any';
    });
  return `${shown.join(' or ')}${nullable ? ', or null' : ''}`;
}

function table(json) {
  const required = new Set(json.required ?? []);
  const rows = Object.entries(json.properties).map(([name, field]) => {
    const nullable = variantsOf(field).some((v) => v.type === 'null');
    return `| \`${name}\` | ${typeOf(field)} | ${required.has(name) && !nullable ? 'yes' : required.has(name) ? 'yes (may be null)' : 'no'} |`;
  });
  return ['| field | type | required |', '|---|---|---|', ...rows].join('\n');
}

function section(kind, schema) {
  const json = z.toJSONSchema(schema, { unrepresentable: 'any', io: 'input' });
  const parts = [`### \`${kind}\` (rank ${KIND_RANKS[kind]})`, '', table(json)];
  for (const [name, field] of Object.entries(json.properties)) {
    if (field.type === 'array' && field.items?.properties) parts.push('', `Each item of \`${name}\`:`, '', table(field.items));
  }
  return parts.join('\n');
}

export function renderEventsDoc() {
  return `# The events' fields

Generated from the zod schemas the receiver validates \`data\` with (\`src/events/schemas.ts\`) by
\`npm run docs\`; a test fails when this page and the schemas disagree. What each event does to the
tables is in [projection.md](projection.md).

Every event is a JSON object envelope \`{"event": <kind>, "timestamp": <ISO 8601 with seconds and a
zone>, "data": {…}}\`. Fields not listed here are kept as sent (a newer service may add some) and
count in the event's identity; "required" fields must be present, and an event whose \`data\` does
not match is kept as a dead letter with the reasons. The rank breaks ties between events of the
same instant (projection.md, section 2).

## The ten kinds the service sends

${Object.entries(serviceDataSchemas)
  .map(([kind, schema]) => section(kind, schema))
  .join('\n\n')}

## The kinds reconciliation writes

Never sent by the service: \`prequal-hooks reconcile\` writes them into the inbox with what it read
from the service's API and found different (each carries its keys and the fields that differed).

${Object.entries(reconcileDataSchemas)
  .map(([kind, schema]) => section(kind, schema))
  .join('\n\n')}
`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(OUT, renderEventsDoc());
  console.log(`wrote ${OUT}`);
}
