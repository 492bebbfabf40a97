// In a process of its own, on the built CLI module (dist/cli/database.js), as replay and rebuild run.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * V8's young generation (MB) in a new process once the CLI's database module is loaded (where
 * smallNursery() is called, or not), and again after churning objects of which some survive a while.
 */
function nurseryMb(small: boolean): { atCall: number; after: number } {
  const database = pathToFileURL(join(process.cwd(), 'dist', 'cli', 'database.js')).href;
  const script = `const { getHeapSpaceStatistics } = await import('node:v8');
    const young = () => getHeapSpaceStatistics().find((space) => space.space_name === 'new_space').space_size / 1048576;
    const { smallNursery } = await import(${JSON.stringify(database)});
    if (${small}) smallNursery();
    const atCall = young();
    let kept = [];
    for (let i = 0; i < 2e6; i++) { kept.push({ i, s: 'x' + i }); if (kept.length > 20000) kept = kept.slice(10000); }
    process.stdout.write(JSON.stringify({ atCall, after: young() }));`;
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  expect(run.status, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as { atCall: number; after: number };
}

describe('smallNursery', () => {
  // replay and rebuild call it once they run: V8 must honour it then, not only at startup.
  it('stops the young generation growing from where it is', () => {
    const wide = nurseryMb(false);
    expect(wide.after).toBeGreaterThan(wide.atCall);
    const small = nurseryMb(true);
    expect(small.after).toBeLessThanOrEqual(small.atCall);
    expect(small.after).toBeLessThan(wide.after);
  });
});
