// `prequal-hooks export --email / --phone`: a person's data read by what they write in (an access
// request rarely names a candidate id), found as `erase` finds them, without a destructive command.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CommandError, UsageError } from '../../src/cli/args.js';
import { erase } from '../../src/cli/erase.js';
import { exportCommand } from '../../src/cli/export.js';
import { replay } from '../../src/cli/replay.js';
import { sampleEvent } from '../../src/testing/index.js';
import { runCommand } from '../support/command-io.js';
import { ENGINES } from '../support/engines.js';
import { tempDir } from '../support/servers.js';

const applied = (candidate_id: string, campaign_id: string, email: string, phone: string) =>
  sampleEvent('candidate.added', {
    timestamp: '2026-02-03T09:00:00Z',
    data: { campaign_id, candidate_id, first_name: 'Marie', last_name: 'Privée', email, phone },
  });

describe.each(ENGINES)('export by e-mail or phone on $name', (engine) => {
  const tmp = tempDir();
  let database: string;
  let cleanup: () => void = () => undefined;
  const exported = async (...argv: string[]) => {
    const run = await runCommand(exportCommand, ['--db', database, ...argv]);
    if (run.error !== undefined) throw run.error;
    return JSON.parse(run.stdout) as Record<string, unknown>;
  };

  beforeAll(async () => {
    ({ database, cleanup } = await engine.fresh());
    const file = join(tmp.dir, 'twice.ndjson');
    const events = [
      applied('cand-twice-1', 'cmp_one', 'Marie.Twice@Example.net', '06 99 88 77 66'),
      applied('cand-twice-2', 'cmp_two', 'marie.twice@example.net', '+33699887766'),
      applied('cand-other', 'cmp_one', 'xmarie.twice@example.net', '+33611111111'),
    ];
    writeFileSync(file, `${events.map((e) => JSON.stringify(e)).join('\n')}\n`);
    expect((await runCommand(replay, [file, '--db', database])).code).toBe(0);
  });
  afterAll(() => {
    cleanup();
    tmp.cleanup();
  });

  it('gives every candidate the person is, each as export --candidate gives it, in id order', async () => {
    const byEmail = await exported('--email', 'MARIE.TWICE@example.net');
    const byPhone = await exported('--phone', '+33 6 99 88 77 66');
    const ids = (document: Record<string, unknown>) => (document.candidates as Array<{ candidate_id: string }>).map((c) => c.candidate_id);
    expect(ids(byEmail)).toEqual(['cand-twice-1', 'cand-twice-2']);
    expect(ids(byPhone)).toEqual(['cand-twice-1', 'cand-twice-2']);
    const one = await exported('--candidate', 'cand-twice-2');
    const { exported_at: _at, ...sameDocument } = one;
    expect((byEmail.candidates as unknown[])[1]).toMatchObject(sameDocument);
    expect(one).toMatchObject({ candidate: { email: 'marie.twice@example.net' }, events: [{ kind: 'candidate.added' }] });
  });

  it('finds whom erase --dry-run finds, without erasing', async () => {
    const dry = await runCommand(erase, [
      '--db',
      database,
      '--email',
      'marie.twice@EXAMPLE.net',
      '--reason',
      'request',
      '--dry-run',
      '--json',
    ]);
    const byEmail = await exported('--email', 'marie.twice@EXAMPLE.net');
    expect((byEmail.candidates as Array<{ candidate_id: string }>).map((c) => c.candidate_id)).toEqual(
      (JSON.parse(dry.stdout) as { candidateIds: string[] }).candidateIds,
    );
  });

  it('exits 1 when no candidate matches, without repeating the e-mail or phone; 2 for two names at once', async () => {
    const none = await runCommand(exportCommand, ['--db', database, '--email', 'nobody@example.net']);
    expect(none.error).toBeInstanceOf(CommandError);
    expect(none.error?.message).toBe('no candidate has that e-mail here');
    expect(none.stdout).toBe('');
    const noPhone = await runCommand(exportCommand, ['--db', database, '--phone', '+33600000000']);
    expect(noPhone.error?.message).toBe('no candidate has that phone here');
    const both = await runCommand(exportCommand, ['--db', database, '--email', 'a@example.net', '--candidate', 'cand-other']);
    expect(both.error).toBeInstanceOf(UsageError);
  });
});
