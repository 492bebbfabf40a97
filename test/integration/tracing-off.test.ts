// @opentelemetry/api is installed here, but no tracer provider is registered (this file runs in
// its own process): nothing is traced, nothing is stored for it, no log line names a trace.
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logging.js';
import { createReceiver, type Receiver } from '../../src/receiver/create-receiver.js';
import { sampleEvent, signedRequest } from '../../src/testing/index.js';
import { activeTracing } from '../../src/tracing/otel.js';
import { tempDir } from '../support/servers.js';
import { sqlOn } from '../support/sql.js';

const SECRET = 'whsec_tracing_off_2c7a';

describe('without a registered tracer provider', () => {
  const open: Array<{ receiver: Receiver; cleanup: () => void }> = [];
  afterEach(async () => {
    for (const { receiver, cleanup } of open.splice(0)) {
      await receiver.close(1000);
      cleanup();
    }
  });

  it('traces nothing: no trace_context kept, no trace_id logged, handlers run as before', async () => {
    expect(activeTracing()).toBeUndefined();
    const lines: string[] = [];
    const sink = new Writable({ write: (chunk: Buffer, _encoding, done) => (lines.push(chunk.toString()), done()) });
    const tmp = tempDir();
    const receiver = createReceiver({ database: tmp.dbPath, secret: SECRET, logger: createLogger({ level: 'warn' }, sink) });
    open.push({ receiver, cleanup: tmp.cleanup });
    let handled = 0;
    receiver.on('credits.low', () => void handled++);
    const request = signedRequest(sampleEvent('credits.low'), { secret: SECRET });
    const headers = {
      ...request.headers,
      'x-service-event': 'credits.depleted',
      traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
    };
    expect((await receiver.receive({ rawBody: request.body, headers })).outcome).toBe('stored');
    await receiver.drain();
    expect(handled).toBe(1);
    expect(await sqlOn(tmp.dbPath).query('SELECT trace_context FROM inbox')).toEqual([{ trace_context: null }]);
    // The one line at warn (the header that differs from the body) carries no trace id.
    expect(lines.map((line) => JSON.parse(line) as Record<string, unknown>)).toEqual([
      expect.objectContaining({
        level: 40,
        msg: 'event header differs from the body; the body wins',
        announced: 'credits.depleted',
        kind: 'credits.low',
      }),
    ]);
    for (const line of lines) expect(JSON.parse(line)).not.toHaveProperty('trace_id');
  });
});
