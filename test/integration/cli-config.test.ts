// serve's configuration: each option from its flag or its variable (the flag wins), the help
// generated from the same table, and --print-config showing what is in force with secrets masked.
import { describe, expect, it } from 'vitest';
import { SERVE_OPTIONS } from '../../src/cli/serve-options.js';
import { envNames } from '../../src/cli/options.js';
import { runCli } from '../support/command-io.js';

const SECRETS = {
  secret: 'rotation-secret-one-0123456789',
  token: 'dashboard-token-0123456789abcdef',
  apiKey: 'sk_live_abcdefghijklmnopqrstuvwxyz012345',
  password: 'pg-password-hunter2',
};

describe('serve configuration', () => {
  it('gives every option but --print-config an environment variable, shown in --help', async () => {
    const help = (await runCli(['serve', '--help'])).stdout;
    for (const [name, spec] of Object.entries(SERVE_OPTIONS)) {
      const names = envNames(name, spec);
      if (name === 'print-config') {
        expect(names).toEqual([]);
        continue;
      }
      expect(names[0], name).toBe(`PREQUAL_HOOKS_${name.toUpperCase().replaceAll('-', '_')}`);
      expect(help, name).toContain(names[0]);
    }
  });

  it('--print-config shows each value and where it came from, every secret masked, and exits 0', async () => {
    const result = await runCli(['serve', '--print-config', '--port', '9001', '--dashboard-token', SECRETS.token], {
      env: {
        PORT: '9000',
        PREQUAL_HOOKS_MAX_BODY: '512kb',
        PREQUAL_HOOKS_SECRET: `${SECRETS.secret},another-secret-0123456789`,
        PREQUAL_HOOKS_API_KEY: SECRETS.apiKey,
        PREQUAL_HOOKS_DB: `postgres://hooks:${SECRETS.password}@127.0.0.1:1/agency`,
        PREQUAL_HOOKS_MAX_BUFFERED_BYTES: '16mb',
        PREQUAL_HOOKS_MAX_CONNECTIONS: '200',
      },
    });
    expect(result.code).toBe(0);
    for (const secret of Object.values(SECRETS)) expect(result.stdout + result.stderr).not.toContain(secret);
    const config = JSON.parse(result.stdout);
    expect(config.port).toEqual({ value: 9001, from: '--port' }); // the flag wins over PORT
    expect(config['max-body']).toEqual({ value: 512 * 1024, from: 'PREQUAL_HOOKS_MAX_BODY' });
    expect(config.secret).toEqual({ value: ['***', '***'], from: 'PREQUAL_HOOKS_SECRET' });
    expect(config['dashboard-token']).toEqual({ value: '***', from: '--dashboard-token' });
    expect(config['api-key']).toEqual({ value: '***', from: 'PREQUAL_HOOKS_API_KEY' });
    expect(config.db.value).toBe('postgres://hooks:***@127.0.0.1:1/agency');
    expect(config.host).toEqual({ value: '0.0.0.0', from: 'default' });
    expect(config['max-buffered-bytes']).toEqual({ value: 16 * 1024 * 1024, from: 'PREQUAL_HOOKS_MAX_BUFFERED_BYTES' });
    expect(config['max-connections']).toEqual({ value: 200, from: 'PREQUAL_HOOKS_MAX_CONNECTIONS' });
  });

  it('defaults to 64 MiB of bodies held and 1024 connections, and refuses a budget smaller than the body limit', async () => {
    const config = JSON.parse((await runCli(['serve', '--print-config'])).stdout);
    expect(config['max-buffered-bytes']).toEqual({ value: 64 * 1024 * 1024, from: 'default' });
    expect(config['max-connections']).toEqual({ value: 1024, from: 'default' });
    const refused = await runCli(['serve', '--print-config', '--max-body', '2mb'], { env: { PREQUAL_HOOKS_MAX_BUFFERED_BYTES: '1mb' } });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/PREQUAL_HOOKS_MAX_BUFFERED_BYTES \(1048576 bytes\) must be no less than --max-body \(2097152 bytes\)/);
  });

  it('ignores the removed --sqlite-thread and PREQUAL_HOOKS_SQLITE_THREAD with a warning naming the one given, so that an old configuration still starts', async () => {
    expect((await runCli(['serve', '--help'])).stdout).not.toContain('sqlite-thread');
    const byFlag = await runCli(['serve', '--print-config', '--sqlite-thread']);
    expect(byFlag.code).toBe(0);
    expect(byFlag.stderr).toBe(
      'prequal-hooks serve: WARNING: --sqlite-thread is ignored (the option was removed): SQLite no longer runs in a worker thread, which measured no faster; remove it from the configuration\n',
    );
    expect(JSON.parse(byFlag.stdout)).not.toHaveProperty('sqlite-thread');
    const byVariable = await runCli(['serve', '--print-config'], { env: { PREQUAL_HOOKS_SQLITE_THREAD: '1' } });
    expect(byVariable.code).toBe(0);
    expect(byVariable.stderr).toMatch(/^prequal-hooks serve: WARNING: PREQUAL_HOOKS_SQLITE_THREAD is ignored \(the option was removed\)/);
    expect((await runCli(['serve', '--print-config'], { env: { PREQUAL_HOOKS_SQLITE_THREAD: '' } })).stderr).toBe('');
  });

  it('names the variable a bad value came from', async () => {
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{ PREQUAL_HOOKS_MAX_BODY: 'lots' }, /PREQUAL_HOOKS_MAX_BODY must be a size/],
      [{ PREQUAL_HOOKS_LOG_LEVEL: 'loud' }, /PREQUAL_HOOKS_LOG_LEVEL must be one of/],
      [{ PREQUAL_HOOKS_ALLOW_UNSIGNED: 'maybe' }, /PREQUAL_HOOKS_ALLOW_UNSIGNED must be 1 or 0/],
      [{ PREQUAL_HOOKS_DASHBOARD_TOKEN: 'short' }, /PREQUAL_HOOKS_DASHBOARD_TOKEN must be at least 16 characters/],
      [{ PREQUAL_HOOKS_POOL_SIZE: '1' }, /PREQUAL_HOOKS_POOL_SIZE must be a whole number from 2/],
      [{ PREQUAL_HOOKS_PORT: '70000', PORT: '80' }, /PREQUAL_HOOKS_PORT must be a whole number/],
      [{ PREQUAL_HOOKS_MAX_CONNECTIONS: '0' }, /PREQUAL_HOOKS_MAX_CONNECTIONS must be a whole number from 1/],
      [{ PREQUAL_HOOKS_MAX_BUFFERED_BYTES: 'plenty' }, /PREQUAL_HOOKS_MAX_BUFFERED_BYTES must be a size/],
    ];
    for (const [env, message] of cases) {
      const result = await runCli(['serve', '--print-config'], { env });
      expect(result.code, JSON.stringify(env)).toBe(2);
      expect(result.stderr, JSON.stringify(env)).toMatch(message);
      expect(result.stderr).not.toContain('short');
    }
  });
});
