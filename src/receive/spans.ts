// The intake's spans: one server span a webhook request (continuing the sender's W3C
// traceparent), and the inbox commit within it. Attributes name kinds, outcomes, sizes and ids,
// never the body: it holds names, e-mails and phone numbers. The spans are passed along, not made
// active: entering a context on every request halved ingest on Node 20 (bench/tracing.js).
import type { EnvelopeReading } from '../events/index.js';
import type { Delivery, StoreDelivery, StoreOutcome } from './delivery.js';
import { headerValue, type IncomingHeaders } from './headers.js';
import { spanIds, SpanKind, StatusCode, traceparentOf, type Span, type Tracing } from '../tracing/otel.js';

/** What a span records of the intake's result (its IntakeResult, named here without importing it). */
interface Received {
  answer: { status: number };
  outcome: string;
  kind?: string;
  inboxId?: number;
  trace?: { trace_id: string; span_id: string } | undefined;
}

const headerGetter = {
  keys: (headers: IncomingHeaders): string[] =>
    typeof (headers as { get?: unknown }).get === 'function' ? ['traceparent', 'tracestate'] : Object.keys(headers),
  get: (headers: IncomingHeaders, key: string): string | string[] | undefined => {
    const value = headerValue(headers, key);
    return typeof value === 'string' || value === undefined ? value : [...value];
  },
};

/**
 * Runs `receive` with a server span: the child of the application's active span (its own HTTP
 * instrumentation), else of the request's traceparent when it has one, else a new trace.
 */
export async function receiveTraced<R extends Received>(
  tracing: Tracing,
  request: { rawBody: Uint8Array; headers: IncomingHeaders },
  receive: (span: Span) => Promise<R>,
): Promise<R> {
  const { api, tracer } = tracing;
  const parent =
    api.trace.getActiveSpan() === undefined
      ? api.propagation.extract(api.ROOT_CONTEXT, request.headers, headerGetter)
      : api.context.active();
  const span = tracer.startSpan(
    'POST webhook',
    { kind: SpanKind.SERVER, attributes: { 'http.request.method': 'POST', 'http.request.body.size': request.rawBody.byteLength } },
    parent,
  );
  try {
    const result = await receive(span);
    span.setAttributes({
      'http.response.status_code': result.answer.status,
      'prequal_hooks.outcome': result.outcome,
      'prequal_hooks.duplicate': result.outcome === 'duplicate',
      ...(result.kind !== undefined && { 'prequal_hooks.event.kind': result.kind }),
      ...(result.inboxId !== undefined && { 'prequal_hooks.inbox_id': result.inboxId }),
    });
    if (result.answer.status >= 500) span.setStatus({ code: StatusCode.ERROR, message: result.outcome });
    result.trace = spanIds(span);
    return result;
  } finally {
    span.end();
  }
}

/**
 * Stores a delivery within an "inbox commit" span; the delivery keeps the request span's
 * traceparent, so that its projection and handler calls can link to the request.
 */
export async function storeTraced(
  tracing: Tracing,
  request: Span,
  store: StoreDelivery,
  delivery: Delivery,
  reading?: EnvelopeReading,
): Promise<StoreOutcome> {
  const { api, tracer } = tracing;
  // The intake's own object, made for this request: set rather than copied.
  delivery.traceContext = traceparentOf(request);
  const span = tracer.startSpan(
    'inbox commit',
    // Its attributes are the request span's (kind, size, inbox id, duplicate): not repeated here, every one is exported bytes.
    { kind: SpanKind.INTERNAL },
    api.trace.setSpan(api.ROOT_CONTEXT, request),
  );
  try {
    const stored = await store(delivery, reading);
    if (!stored.ok) span.setStatus({ code: StatusCode.ERROR, message: stored.code });
    return stored;
  } finally {
    span.end();
  }
}
