import { spawnSync } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { accessLogger, createLogger, logDestination } from '../../src/logging.js';
import { tempDir } from '../support/servers.js';

const tmp = tempDir('prequal-hooks-log-');
afterAll(() => tmp.cleanup());

function logFile(name: string) {
  const path = join(tmp.dir, name);
  const fd = openSync(path, 'w');
  const destination = logDestination(fd);
  const logger = createLogger({ level: 'info' }, destination);
  const lines = () =>
    readFileSync(path, 'utf8')
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  const close = () => (destination.end(), closeSync(fd));
  return { logger, destination, lines, close };
}

describe('logDestination', () => {
  it('holds info lines, and writes them with the first warn line, in order', () => {
    const { logger, lines, close } = logFile('warn.log');
    logger.info({ n: 1 }, 'one');
    logger.info({ n: 2 }, 'two');
    expect(lines()).toEqual([]);
    logger.warn({ n: 3 }, 'three');
    expect(lines().map((line) => line.n)).toEqual([1, 2, 3]);
    close();
  });

  it('writes held lines within a second when no more come, and what is left on end()', async () => {
    const { logger, lines, destination, close } = logFile('quiet.log');
    logger.info('alone');
    await new Promise((resolve) => setTimeout(resolve, 1300));
    expect(lines().map((line) => line.msg)).toEqual(['alone']);
    logger.info('last');
    destination.end();
    expect(lines().map((line) => line.msg)).toEqual(['alone', 'last']);
    close();
  });

  it('writes a batch of about 4 KB without being asked, each line whole', () => {
    const { logger, lines, close } = logFile('batch.log');
    for (let i = 0; i < 110; i++) logger.info({ i, pad: 'x'.repeat(100) }, 'line');
    const written = lines();
    expect(written.length).toBeGreaterThan(20);
    expect(written.length).toBeLessThan(110);
    expect(written.map((line) => line.i)).toEqual(written.map((_, i) => i));
    close();
  });

  it('writes what it holds when the process dies of an uncaught exception', () => {
    const logging = pathToFileURL(join(process.cwd(), 'dist', 'logging.js')).href;
    const script = `const { createLogger, logDestination } = await import(${JSON.stringify(logging)});
      const logger = createLogger({ level: 'info' }, logDestination(1));
      logger.info('held');
      setImmediate(() => { throw new Error('crash'); });`;
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(run.status).not.toBe(0);
    expect(run.stdout.split('\n').filter((line) => line.includes('"msg":"held"'))).toHaveLength(1);
  });
});

describe('accessLogger', () => {
  it('censors a top-level secret or PII key; the logger it comes from still censors them one level down', () => {
    const { logger, lines, close } = logFile('access.log');
    accessLogger(logger).info({ status: 200, email: 'a@exemple.fr', secret: 'whsec_x' }, 'webhook');
    logger.info({ data: { email: 'b@exemple.fr' }, lead: { phone: '+33600000000' } }, 'other');
    logger.warn('flush');
    const [access, other] = lines();
    expect(access).toMatchObject({ msg: 'webhook', status: 200, email: '[redacted]', secret: '[redacted]' });
    expect(other).toMatchObject({ data: { email: '[redacted]' }, lead: { phone: '[redacted]' } });
    close();
  });
});
