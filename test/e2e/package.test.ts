// What users get: the packed tarball installed in a new consumer project, whose code (the README's
// Express and replay examples) must typecheck under `tsc --strict` without skipLibCheck, and run;
// without pg, which is an optional peer.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

const CONSUMER_CODE = `
import assert from 'node:assert/strict';
import { join } from 'node:path';
import express from 'express';
import { createReceiver, openStore, verify } from 'prequal-hooks';
import { request } from 'node:http';
import { FIXTURES_DIR, sampleEvent, signedRequest } from 'prequal-hooks/testing';
import { eventIdentity, parseInstant } from 'prequal-hooks/events';

// The README's Express example.
const app = express();
const receiver = createReceiver({ database: ':memory:', secret: 'consumer-secret' });
app.post('/webhooks/prequal', receiver.middleware());
app.use(express.json());
const shortlisted: string[] = [];
receiver.on('candidate.interview.completed', async (event, { row }) => {
  if (event.data.interview_score >= 8) shortlisted.push(\`\${row?.first_name} \${row?.last_name}\`);
});
app.get('/campaigns/:id/shortlist', async (req, res) => {
  res.json(await receiver.query.listCandidates(req.params.id, { status: 'completed', min_score: 8, sort: 'score_desc' }));
});

// The README's replay example, with the fixtures the package ships.
const summary = await receiver.replay([
  join(FIXTURES_DIR, 'scenarios/campaign-lifecycle.shuffled.ndjson'),
  sampleEvent('candidate.interview.completed', {
    data: { candidate_id: 'c-42', campaign_id: 'cmp_Rk4vN8qWz2', first_name: 'Inès', last_name: 'Haddad', interview_score: 9 },
  }),
]);
await receiver.drain();
assert.deepEqual({ received: summary.received, duplicates: summary.duplicates, projected: summary.projected }, { received: 56, duplicates: 9, projected: 47 });
assert.deepEqual(shortlisted.sort(), ['Inès Haddad', 'Noémie Brunet']);
const { candidates } = await receiver.query.listCandidates('cmp_Rk4vN8qWz2', { sort: 'score_desc', per_page: 2 });
assert.deepEqual(candidates.map((c) => c.interview_score), [9, 8.5]);
assert.equal(verify('consumer-secret', '{}', 'sha256=00').ok, false);

// The change feed's rows are typed per entity: narrowed on entity and op, a row's columns are known.
const { changes } = await receiver.changesPage({ limit: 1000 });
const scores = changes.flatMap((change) =>
  change.entity === 'candidate' && change.op === 'upsert' && 'interview_score' in change.row ? [change.row.interview_score] : [],
);
assert.ok(scores.includes(9));
// The events' toolkit, from its entry point.
assert.match(eventIdentity({ event: 'credits.low', timestamp: '2026-11-20T10:00:00Z', data: {} }), /^[0-9a-f]{64}$/);
assert.equal(parseInstant('2026-11-20T10:00:00Z'), Date.UTC(2026, 10, 20, 10));

// The console, mounted as the README says, with its assets served from the installed package.
const token = 'consumer-dashboard-token-0123456789';
app.use('/ops', receiver.dashboard({ token }));
const server = app.listen(0, '127.0.0.1');
await new Promise((resolve) => server.once('listening', resolve));
const base = \`http://127.0.0.1:\${(server.address() as { port: number }).port}\`;
const auth = { authorization: \`Bearer \${token}\` };
const page = await fetch(\`\${base}/ops/\`, { headers: auth });
assert.equal(page.status, 200);
const html = await page.text();
const assets = [...html.matchAll(/(?:src|href)="([^"]+\\.(?:js|css))"/g)].map((m) => m[1]!);
assert.ok(assets.length >= 2, 'the overview links its scripts and styles');
for (const asset of assets) assert.equal((await fetch(new URL(asset, \`\${base}/ops/\`), { headers: auth })).status, 200, asset);
assert.equal((await fetch(\`\${base}/ops/\`)).status, 401);

// A signed request's body suits both fetch and node:http under strict types (@types/node 26).
const signed = signedRequest(sampleEvent('credits.low'), { secret: 'consumer-secret' });
const viaFetch = await fetch(\`\${base}/webhooks/prequal\`, { method: 'POST', headers: signed.headers, body: signed.body });
assert.equal(viaFetch.status, 200);
const viaHttp = await new Promise<number>((resolve, reject) => {
  const sent = request(\`\${base}/webhooks/prequal\`, { method: 'POST', headers: signed.headers }, (answer) => {
    answer.resume();
    resolve(answer.statusCode ?? 0);
  });
  sent.once('error', reject);
  sent.end(signed.body);
});
assert.equal(viaHttp, 200);
server.close();

// Reconciliation's types: a client from prequal-hooks/client.
import type { Client } from 'prequal-hooks/client';
export const reconcileLater = (client: Client) => receiver.reconcile({ client, dryRun: true });
await receiver.close();

// pg is an optional peer dependency, not installed here: a PostgreSQL URL says how to get it.
await assert.rejects(openStore('postgres://127.0.0.1:1/none'), { name: 'ConfigurationError', message: /npm install pg/ });
console.log('consumer ok');
`;

describe('the packed package in a consumer project', () => {
  const dir = mkdtempSync(join(tmpdir(), 'prequal-consumer-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('typechecks the README examples under tsc --strict without skipLibCheck, and runs them', () => {
    const run = (command: string, args: string[], cwd: string) =>
      execFileSync(command, args, {
        cwd,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, npm_config_update_notifier: 'false' },
      });
    run('npm', ['pack', '--ignore-scripts', '--pack-destination', dir], ROOT);
    const tarball = readdirSync(dir).find((f) => f.endsWith('.tgz'))!;
    const consumer = join(dir, 'consumer');
    cpSync(join(ROOT, 'test/support/consumer'), consumer, { recursive: true });
    // Install scripts are not run: the typecheck needs none, and better-sqlite3's native build is
    // taken from this repository's (the same version, built for this machine) rather than rebuilt.
    run('npm', ['install', join(dir, tarball), '--ignore-scripts', '--no-audit', '--no-fund', '--prefer-offline'], consumer);
    cpSync(join(ROOT, 'node_modules/better-sqlite3/build'), join(consumer, 'node_modules/better-sqlite3/build'), { recursive: true });
    expect(existsSync(join(consumer, 'node_modules/pg')), 'pg, an optional peer, is not installed').toBe(false);
    writeFileSync(join(consumer, 'app.ts'), CONSUMER_CODE);
    try {
      run(process.execPath, [join(consumer, 'node_modules/typescript/bin/tsc'), '-p', '.'], consumer);
    } catch (error) {
      throw new Error(`tsc failed in the consumer:\n${(error as { stdout?: string }).stdout}`, { cause: error });
    }
    expect(run(process.execPath, ['app.js'], consumer)).toContain('consumer ok');
  }, 180_000);
});
