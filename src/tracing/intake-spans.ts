// The intake's spans: one server span a webhook request (continuing the sender's W3C
// traceparent), and the inbox commit within it. Attributes name kinds, outcomes, sizes and ids,
// never the body: it holds names, e-mails and phone numbers.
import type { Delivery, StoreOutcome } from '../receive/delivery.js';
import { headerValue, type IncomingHeaders } from '../receive/headers.js';
import { SpanKind, StatusCode, traceparentOf, type Tracing } from './otel.js';

/** What a span records of the intake's result (its IntakeResult, named here without importing it). */
interface Received {
  answer: { status: number };
  outcome: string;
  kind?: string;
  inboxId?: number;
}

const headerGetter = {
  keys: (headers: IncomingHeaders): string[] => (typeof (headers as { get?: unknown }).get === 'function' ? ['traceparent', 'tracestate'] : Object.keys(headers)),
  get: (headers: IncomingHeaders, key: string): string | string[] | undefined => {
    const value = headerValue(headers, key);
    return typeof value === 'string' || value === undefined ? value : [...value];
  },
};

/** Runs `receive` within a server span, child of the request's traceparent when it has one. */
export async function receiveTraced<R extends Received>(tracing: Tracing, request: { rawBody: Uint8Array; headers: IncomingHeaders }, receive: () => Promise<R>): Promise<R> {
  const { api, tracer } = tracing;
  const parent = api.propagation.extract(api.ROOT_CONTEXT, request.headers, headerGetter);
  const span = tracer.startSpan('POST webhook', { kind: SpanKind.SERVER, attributes: { 'http.request.method': 'POST', 'http.request.body.size': request.rawBody.byteLength } }, parent);
  try {
    const result = await api.context.with(api.trace.setSpan(parent, span), receive);
    span.setAttributes({
      'http.response.status_code': result.answer.status,
      'prequal_hooks.outcome': result.outcome,
      'prequal_hooks.duplicate': result.outcome === 'duplicate',
      ...(result.kind !== undefined && { 'prequal_hooks.event.kind': result.kind }),
      ...(result.inboxId !== undefined && { 'prequal_hooks.inbox_id': result.inboxId }),
    });
    if (result.answer.status >= 500) span.setStatus({ code: StatusCode.ERROR, message: result.outcome });
    return result;
  } finally {
    span.end();
  }
}

/**
 * Stores a delivery within an "inbox commit" span; the delivery keeps the request span's
 * traceparent, so that its projection and handler calls can link to the request.
 */
export async function storeTraced(tracing: Tracing, store: (delivery: Delivery) => Promise<StoreOutcome>, delivery: Delivery): Promise<StoreOutcome> {
  const { api, tracer } = tracing;
  const request = api.trace.getActiveSpan();
  const traced = request === undefined ? delivery : { ...delivery, traceContext: traceparentOf(request) };
  const span = tracer.startSpan('inbox commit', {
    kind: SpanKind.INTERNAL,
    attributes: { 'prequal_hooks.verdict': delivery.verdict, 'prequal_hooks.body.size': delivery.raw.byteLength, ...(delivery.kind !== null && { 'prequal_hooks.event.kind': delivery.kind }) },
  });
  try {
    const stored = await store(traced);
    if (stored.ok) span.setAttributes({ 'prequal_hooks.duplicate': stored.duplicate, ...(stored.inboxId !== null && { 'prequal_hooks.inbox_id': stored.inboxId }) });
    else span.setStatus({ code: StatusCode.ERROR, message: stored.code });
    return stored;
  } finally {
    span.end();
  }
}
