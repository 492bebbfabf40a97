import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { findExecutable, inCi, needs } from '../support/needs.js';

const CHROMIUM = { install: 'apt-get install -y chromium, or set CHROMIUM_PATH', untested: "the console's browser tests" };

describe('needs: a missing tool skips loudly, or fails under CI=true', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
    vi.restoreAllMocks();
  });

  it('a tool found runs its tests, quietly, in CI or not', () => {
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    vi.stubEnv('CI', 'true');
    expect(needs('Chromium', true, CHROMIUM)).toBe(true);
    vi.stubEnv('CI', '');
    expect(needs('Chromium', true, CHROMIUM)).toBe(true);
    expect(stderr).not.toHaveBeenCalled();
  });

  it('outside CI, a missing tool skips its tests and says so on stderr, with how to install it', () => {
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    for (const ci of [undefined, '', 'false', '0']) {
      vi.stubEnv('CI', ci);
      expect(needs('Chromium', false, CHROMIUM), `CI=${String(ci)}`).toBe(false);
    }
    expect(stderr).toHaveBeenCalledTimes(4);
    const said = String(stderr.mock.calls[0]![0]);
    expect(said).toContain("!!! NO CHROMIUM: SKIPPED the console's browser tests (under CI=true, this fails).");
    expect(said).toContain('!!! Install it: apt-get install -y chromium, or set CHROMIUM_PATH.');
  });

  it('under CI=true (or CI=1), a missing tool throws, which fails the file or the run, naming the tool and how to install it', () => {
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    for (const ci of ['true', '1']) {
      vi.stubEnv('CI', ci);
      expect(() => needs('promtool', false, { install: 'apt-get install -y prometheus', untested: 'the lint of /metrics' })).toThrow(
        new Error('promtool is missing, and CI=true: the lint of /metrics cannot be tested. Install it: apt-get install -y prometheus.'),
      );
    }
    expect(stderr).not.toHaveBeenCalled();
  });

  it('reads the environment it is given, else the process one', () => {
    vi.stubEnv('CI', '');
    expect(inCi({ CI: 'true' })).toBe(true);
    expect(inCi({})).toBe(false);
    expect(inCi()).toBe(false);
    expect(() => needs('nginx', false, { install: 'apt-get install -y nginx', untested: 'x' }, { CI: 'true' })).toThrow(
      /^nginx is missing/,
    );
  });

  it('findExecutable looks on PATH (then in the extra folders given), or only at the override when one is set', () => {
    const dir = mkdtempSync(join(tmpdir(), 'prequal-needs-'));
    try {
      const [bin, sbin] = [join(dir, 'bin'), join(dir, 'sbin')];
      mkdirSync(bin);
      mkdirSync(sbin);
      writeFileSync(join(bin, 'not-runnable'), '', { mode: 0o644 });
      writeFileSync(join(bin, 'chromium'), '', { mode: 0o755 });
      writeFileSync(join(sbin, 'nginx'), '', { mode: 0o755 });
      const env = { PATH: [join(dir, 'nowhere'), bin].join(delimiter) };
      expect(findExecutable(['chromium-browser', 'chromium'], {}, env)).toBe(join(bin, 'chromium'));
      expect(findExecutable(['chromium'], {}, { PATH: '' })).toBeUndefined();
      expect(findExecutable(['nginx'], {}, env)).toBeUndefined();
      expect(findExecutable(['nginx'], { alsoIn: [sbin] }, env)).toBe(join(sbin, 'nginx'));
      expect(findExecutable(['not-runnable', 'bin'], {}, { PATH: dir + delimiter + bin })).toBeUndefined();
      expect(findExecutable(['chromium'], { override: '' }, env)).toBe(join(bin, 'chromium'));
      expect(findExecutable(['chromium'], { override: join(sbin, 'nginx') }, env)).toBe(join(sbin, 'nginx'));
      expect(findExecutable(['chromium'], { override: join(dir, 'gone') }, env)).toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
