import { closeSync, openSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { accessLogger, createLogger, logDestination } from '../../src/logging.js';
import { tempDir } from '../support/servers.js';
import { waitFor } from '../support/wait-for.js';

const tmp = tempDir('prequal-hooks-log-');
afterAll(() => tmp.cleanup());

function logFile(name: string, waitMs?: number) {
  const path = join(tmp.dir, name);
  const fd = openSync(path, 'w');
  const destination = logDestination(fd, waitMs === undefined ? {} : { waitMs });
  const logger = createLogger({ level: 'info' }, destination);
  // Whole lines only: a write on its way may have put part of the next one there.
  const lines = () =>
    readFileSync(path, 'utf8')
      .split('\n')
      .slice(0, -1)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  const written = () => new Promise<void>((resolve) => destination.flush(() => resolve()));
  const close = async () => (await written(), closeSync(fd));
  return { logger, destination, lines, written, close };
}

/**
 * Resolves once a write queued now has reached its file: a write the destination had handed to the
 * system before it (on the same libuv pool, which starts its work in order) is there by then too.
 * "Nothing written" is then seen without waiting for a guessed time.
 */
const aWriteLater = () => writeFile(join(tmp.dir, 'later.log'), 'x');

describe('logDestination', () => {
  it('holds info lines, and writes them with the first warn line, in order', async () => {
    const { logger, lines, close } = logFile('warn.log', 60_000);
    logger.info({ n: 1 }, 'one');
    logger.info({ n: 2 }, 'two');
    await aWriteLater();
    expect(lines()).toEqual([]);
    logger.warn({ n: 3 }, 'three');
    await waitFor(() => lines().length >= 3, 2000, 'the held lines and the warn line');
    expect(lines().map((line) => line.n)).toEqual([1, 2, 3]);
    await close();
  });

  it('writes held lines within the wait when no more come, and everything on flush', async () => {
    const { logger, lines, written, close } = logFile('quiet.log', 300);
    logger.info('alone');
    await waitFor(() => lines().length >= 1, 2000, 'the held line, once the wait is over');
    expect(lines().map((line) => line.msg)).toEqual(['alone']);
    logger.info('last');
    await written();
    expect(lines().map((line) => line.msg)).toEqual(['alone', 'last']);
    await close();
  });

  it('writes once about 4 KB are held, without being asked, each line whole and in order', async () => {
    const { logger, lines, close } = logFile('batch.log', 60_000);
    for (let i = 0; i < 3; i++) logger.info({ i, pad: 'x'.repeat(100) }, 'line');
    await aWriteLater();
    expect(lines()).toEqual([]);
    for (let i = 3; i < 110; i++) logger.info({ i, pad: 'x'.repeat(100) }, 'line');
    await waitFor(() => lines().length > 20, 2000, 'a batch of about 4 KB');
    const seen = lines();
    expect(seen.map((line) => line.i)).toEqual(seen.map((_, i) => i));
    await close();
  });

  it('writes a line logged while a write is on its way, with no line after it and no timer', async () => {
    const { logger, lines, close } = logFile('busy.log', 60_000);
    // The warn line's write is on its way when the error line comes (a reload that fails says both).
    logger.warn('first');
    logger.error('second');
    await waitFor(() => lines().length >= 2, 2000, 'the warn and error lines');
    expect(lines().map((line) => line.msg)).toEqual(['first', 'second']);
    // And past 4 KB: a batch on its way, then a warn line.
    for (let i = 0; i < 40; i++) logger.info({ i, pad: 'x'.repeat(100) }, 'line');
    logger.warn('while busy');
    await waitFor(() => lines().at(-1)?.msg === 'while busy', 2000, 'the warn line after the batch');
    expect(lines()).toHaveLength(43);
    await close();
  });

  // Last: the closed descriptor's number is free for the next file opened, which its writes would reach.
  it('goes on when its descriptor is gone: the write fails without ending the process', async () => {
    // The periodic flush's timer is faked (it is made with the destination): its ticks are run
    // here, one at a time, rather than waited for.
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    try {
      const fd = openSync(join(tmp.dir, 'gone.log'), 'w');
      const logger = createLogger({ level: 'info' }, logDestination(fd, { waitMs: 10 }));
      expect(vi.getTimerCount()).toBe(1); // the periodic flush
      closeSync(fd);
      // A warn line is written at once, and the periodic flush runs on: each write fails (EBADF),
      // which an 'error' event nobody hears would turn into an uncaught exception failing this run.
      logger.warn('to a closed descriptor');
      await aWriteLater();
      for (let tick = 0; tick < 3; tick++) {
        vi.advanceTimersByTime(10);
        await aWriteLater();
      }
      expect(() => logger.info('still logging')).not.toThrow();
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('accessLogger', () => {
  it('censors a top-level secret or PII key; the logger it comes from still censors them one level down', async () => {
    const { logger, lines, written, close } = logFile('access.log');
    accessLogger(logger).info({ status: 200, email: 'a@exemple.fr', secret: 'whsec_x' }, 'webhook');
    logger.info({ data: { email: 'b@exemple.fr' }, lead: { phone: '+33600000000' } }, 'other');
    logger.warn('flush');
    await written();
    const [access, other] = lines();
    expect(access).toMatchObject({ msg: 'webhook', status: 200, email: '[redacted]', secret: '[redacted]' });
    expect(other).toMatchObject({ data: { email: '[redacted]' }, lead: { phone: '[redacted]' } });
    await close();
  });
});
