// `prequal-hooks erase` and `export` in this process, on SQLite and PostgreSQL: a person who applied
// twice (beside a running serve, and killed mid-way: test/e2e/cli-erase.test.ts).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sampleEvent } from '../../src/testing/index.js';
import { runCli } from '../support/command-io.js';
import { ENGINES } from '../support/engines.js';
import { tempDir } from '../support/servers.js';

describe('prequal-hooks erase and export', () => {
  const tmp = tempDir();
  afterAll(() => tmp.cleanup());

  it.each(ENGINES.map((e) => [e.name, e] as const))(
    'on %s, a person who applied twice: --dry-run lists both ids and changes nothing, then both are erased and listed',
    async (_name, engine) => {
      const { database } = await engine.fresh();
      const file = join(tmp.dir, `twice-${engine.name}.ndjson`);
      const applied = (candidate_id: string, campaign_id: string, email: string, phone: string) =>
        sampleEvent('candidate.added', {
          timestamp: '2026-02-03T09:00:00Z',
          data: { campaign_id, candidate_id, first_name: 'Marie', last_name: 'Privée', email, phone },
        });
      writeFileSync(
        file,
        `${[
          applied('cand-twice-1', 'cmp_one', 'Marie.Twice@Example.net', '06 99 88 77 66'),
          applied('cand-twice-2', 'cmp_two', 'marie.twice@example.net', '+33699887766'),
          applied('cand-other', 'cmp_one', 'xmarie.twice@example.net', '+33611111111'),
        ]
          .map((e) => JSON.stringify(e))
          .join('\n')}\n`,
      );
      expect((await runCli(['replay', '--db', database, file])).code).toBe(0);
      const exported = async (id: string) =>
        JSON.parse((await runCli(['export', '--db', database, '--candidate', id])).stdout) as { candidate: unknown; events: unknown[] };

      const dry = await runCli(['erase', '--db', database, '--phone', '0699887766', '--reason', 'request', '--dry-run']);
      expect(dry.code, dry.stderr).toBe(0);
      expect(dry.stdout).toBe(
        'dry run: would erase 2 candidates (cand-twice-1, cand-twice-2) and redact 2 stored events; nothing changed\n',
      );
      expect((await exported('cand-twice-1')).candidate).not.toBeNull();
      expect((await exported('cand-twice-2')).candidate).not.toBeNull();

      const erased = await runCli(['erase', '--db', database, '--email', 'MARIE.TWICE@example.net', '--reason', 'request', '--json']);
      expect(erased.code, erased.stderr).toBe(0);
      expect(JSON.parse(erased.stdout)).toMatchObject({ candidateIds: ['cand-twice-1', 'cand-twice-2'], eventsRedacted: 2, dryRun: false });
      expect(erased.stdout).not.toMatch(/marie|9988/i);
      for (const id of ['cand-twice-1', 'cand-twice-2']) expect((await exported(id)).candidate).toBeNull();
      expect(await exported('cand-other')).toMatchObject({
        candidate: { email: 'xmarie.twice@example.net' },
        events: [{ body: { data: { email: 'xmarie.twice@example.net' } } }],
      });
    },
  );
});
