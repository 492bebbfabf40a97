// OpenTelemetry with the real SDK (NodeSDK, in-memory exporter), registered before the receiver
// is created, as an application would: the spans of a webhook from its request to its handler.
import { Writable } from 'node:stream';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logging.js';
import { createReceiver, type Receiver } from '../../src/receiver/create-receiver.js';
import { sampleEvent, signedRequest } from '../../src/testing/index.js';
import { ENGINES } from '../support/engines.js';

const SECRET = 'whsec_tracing_5b1e9d3a';
const exporter = new InMemorySpanExporter();
// No resource detection: its pending attributes would hold exports back past the assertions.
const sdk = new NodeSDK({
  autoDetectResources: false,
  spanProcessors: [new SimpleSpanProcessor({ exporter })],
  instrumentations: [],
  metricReaders: [],
  logRecordProcessors: [],
});
const INCOMING_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const INCOMING_SPAN = '00f067aa0ba902b7';

beforeAll(() => sdk.start());
afterAll(() => sdk.shutdown());

/** Every string a span exports about itself: name, attributes, links' attributes, events. */
function exportedText(spans: readonly ReadableSpan[]): string {
  return JSON.stringify(
    spans.map((s) => ({
      name: s.name,
      attributes: s.attributes,
      links: s.links.map((l) => l.attributes),
      events: s.events,
      status: s.status,
    })),
  );
}

describe.each(ENGINES)('traces on $name', (engine) => {
  const open: Array<{ receiver: Receiver; cleanup: () => void }> = [];
  afterEach(async () => {
    for (const { receiver, cleanup } of open.splice(0)) {
      await receiver.close(1000);
      cleanup();
    }
    exporter.reset();
  });

  async function start(lines: string[] = []) {
    const { database, cleanup } = await engine.fresh();
    const sink = new Writable({ write: (chunk: Buffer, _encoding, done) => (lines.push(chunk.toString()), done()) });
    const receiver = createReceiver({
      database,
      secret: SECRET,
      logger: createLogger({ level: 'warn' }, sink),
      dispatch: { handlerRetryDelayMs: 5, handlerAttempts: 2 },
    });
    open.push({ receiver, cleanup });
    await receiver.ready();
    return receiver;
  }

  it('a request continues its traceparent; commit, projection and handler link back to it through the inbox row', async () => {
    const lines: string[] = [];
    const receiver = await start(lines);
    const handled: string[] = [];
    receiver.on('candidate.interview.completed', (event) => void handled.push(event.event));
    const event = sampleEvent('candidate.interview.completed');
    const request = signedRequest(event, { secret: SECRET });
    const headers = { ...request.headers, traceparent: `00-${INCOMING_TRACE}-${INCOMING_SPAN}-01` };
    const first = await receiver.receive({ rawBody: request.body, headers });
    const again = await receiver.receive({ rawBody: request.body, headers });
    await receiver.drain();
    expect(first.outcome).toBe('stored');
    expect(again.outcome).toBe('duplicate');
    expect(handled).toHaveLength(1);

    const spans = exporter.getFinishedSpans();
    const servers = spans.filter((s) => s.name === 'POST webhook');
    expect(servers).toHaveLength(2);
    const [request1, request2] = servers as [ReadableSpan, ReadableSpan];
    expect(request1.kind).toBe(1); // SERVER
    expect(request1.spanContext().traceId).toBe(INCOMING_TRACE);
    expect(request1.parentSpanContext?.spanId).toBe(INCOMING_SPAN);
    expect(request1.attributes).toMatchObject({
      'prequal_hooks.event.kind': 'candidate.interview.completed',
      'prequal_hooks.outcome': 'stored',
      'prequal_hooks.duplicate': false,
      'prequal_hooks.inbox_id': first.inboxId,
      'http.response.status_code': 200,
      'http.request.body.size': request.body.byteLength,
    });
    expect(request2.attributes).toMatchObject({ 'prequal_hooks.outcome': 'duplicate', 'prequal_hooks.duplicate': true });

    const commits = spans.filter((s) => s.name === 'inbox commit');
    expect(commits).toHaveLength(2);
    expect(commits[0]!.parentSpanContext?.spanId).toBe(request1.spanContext().spanId);

    // The projection and the handler run later, off the request: linked (not parented) to it,
    // through the traceparent the inbox row kept.
    const requestLink = { traceId: INCOMING_TRACE, spanId: request1.spanContext().spanId };
    const projection = spans.find((s) => s.name === 'project inbox');
    expect(projection?.kind).toBe(4); // CONSUMER
    expect(projection?.parentSpanContext).toBeUndefined();
    expect(projection?.attributes).toMatchObject({ 'messaging.operation.type': 'process', 'messaging.batch.message_count': 1 });
    expect(projection?.links.map((l) => ({ traceId: l.context.traceId, spanId: l.context.spanId }))).toEqual([requestLink]);
    const handler = spans.find((s) => s.name === 'handle candidate.interview.completed');
    expect(handler?.parentSpanContext).toBeUndefined();
    expect(handler?.attributes).toMatchObject({
      'messaging.operation.type': 'process',
      'prequal_hooks.outcome': 'ok',
      'prequal_hooks.inbox_id': first.inboxId,
    });
    expect(handler?.links.map((l) => ({ traceId: l.context.traceId, spanId: l.context.spanId }))).toEqual([requestLink]);

    // Never a name, an e-mail, a phone number or the secret in what is exported.
    const text = exportedText(spans);
    for (const personal of [
      event.data.first_name,
      event.data.last_name,
      event.data.email,
      event.data.phone,
      SECRET,
      request.headers['X-Service-Signature'],
    ]) {
      expect(text).not.toContain(String(personal));
    }
  });

  it('a failing handler is an error span with the error class only, never its message', async () => {
    const receiver = await start();
    receiver.on('candidate.interview.completed', (event) => {
      throw new TypeError(`cannot reach ${event.data.email}`);
    });
    const request = signedRequest(sampleEvent('candidate.interview.completed'), { secret: SECRET });
    await receiver.receive({ rawBody: request.body, headers: request.headers });
    await receiver.drain();
    const calls = exporter.getFinishedSpans().filter((s) => s.name === 'handle candidate.interview.completed');
    expect(calls).toHaveLength(2);
    expect(calls[0]!.status.code).toBe(2); // ERROR
    expect(calls[0]!.attributes).toMatchObject({
      'prequal_hooks.outcome': 'failed',
      'error.type': 'TypeError',
      'prequal_hooks.attempt': 1,
    });
    expect(exportedText(calls)).not.toContain('kevin');
  });

  it('log lines written within a span carry its trace_id and span_id', async () => {
    const lines: string[] = [];
    const receiver = await start(lines);
    const request = signedRequest(sampleEvent('credits.low'), { secret: SECRET });
    // A header that differs from the body is logged (a warning) while the request is handled.
    await receiver.receive({ rawBody: request.body, headers: { ...request.headers, 'x-service-event': 'credits.depleted' } });
    const server = exporter.getFinishedSpans().find((s) => s.name === 'POST webhook')!;
    const warning = lines
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .find((line) => line.msg === 'event header differs from the body; the body wins');
    expect(warning).toMatchObject({ trace_id: server.spanContext().traceId, span_id: server.spanContext().spanId });
  });
});
