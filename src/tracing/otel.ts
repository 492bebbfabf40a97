// OpenTelemetry is an optional peer dependency: its API is loaded on first use, and a library
// without it (or without a registered tracer provider) traces nothing and pays one boolean.
// The types below are the few parts of @opentelemetry/api used here, written out so that the
// published declarations never name a package the application may not have.
import { createRequire } from 'node:module';

interface SpanContext {
  traceId: string;
  spanId: string;
  traceFlags: number;
  isRemote?: boolean;
}
export type Attributes = Record<string, string | number | boolean | undefined>;
export interface Link {
  context: SpanContext;
  attributes?: Attributes;
}
export interface Span {
  spanContext(): SpanContext;
  setAttribute(key: string, value: string | number | boolean): Span;
  setAttributes(attributes: Attributes): Span;
  setStatus(status: { code: number; message?: string }): Span;
  end(endTime?: number): void;
}
export type Context = object;
interface SpanOptions {
  kind?: number;
  attributes?: Attributes;
  links?: Link[];
  startTime?: number;
}
interface Tracer {
  startSpan(name: string, options?: SpanOptions, context?: Context): Span;
}
interface TextMapGetter<Carrier> {
  keys(carrier: Carrier): string[];
  get(carrier: Carrier, key: string): string | string[] | undefined;
}
/** What is used of `@opentelemetry/api`. */
export interface OtelApi {
  trace: {
    getTracerProvider(): { getTracer(name: string, version?: string): Tracer; getDelegateTracer?(name: string): Tracer | undefined };
    getActiveSpan(): Span | undefined;
    setSpan(context: Context, span: Span): Context;
    isSpanContextValid?(context: SpanContext): boolean;
  };
  context: { active(): Context; with<T>(context: Context, fn: () => T): T };
  propagation: { extract<Carrier>(context: Context, carrier: Carrier, getter: TextMapGetter<Carrier>): Context };
  ROOT_CONTEXT: Context;
}

/** The span kinds of @opentelemetry/api (a const enum there). */
export const SpanKind = { INTERNAL: 0, SERVER: 1, CONSUMER: 4 } as const;
/** The status codes of @opentelemetry/api. */
export const StatusCode = { ERROR: 2 } as const;

/** What the receiver traces with; undefined when tracing is off. */
export interface Tracing {
  api: OtelApi;
  tracer: Tracer;
}

let loaded: OtelApi | null | undefined;

/** @opentelemetry/api when the application has it installed; null otherwise (tried once). */
export function otelApi(): OtelApi | null {
  if (loaded === undefined) {
    try {
      loaded = createRequire(import.meta.url)('@opentelemetry/api') as OtelApi;
    } catch {
      loaded = null;
    }
  }
  return loaded;
}

/**
 * Tracing, when @opentelemetry/api is installed and a tracer provider is registered (the
 * application's, or the one `serve` starts); undefined otherwise. Decided once, when the receiver
 * is created: register the provider before.
 */
export function activeTracing(): Tracing | undefined {
  const api = otelApi();
  if (api === null) return undefined;
  const provider = api.trace.getTracerProvider();
  // The API's proxy provider has no delegate until a provider is registered.
  if (typeof provider.getDelegateTracer === 'function' && provider.getDelegateTracer('prequal-hooks') === undefined) return undefined;
  return { api, tracer: provider.getTracer('prequal-hooks') };
}

/** The W3C traceparent of a span: what an inbox row keeps to link its processing to its request. */
export function traceparentOf(span: Span): string {
  const { traceId, spanId, traceFlags } = span.spanContext();
  return `00-${traceId}-${spanId}-${(traceFlags & 1) === 1 ? '01' : '00'}`;
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** A link to the request that stored a row, from its traceparent; none when it has none. */
export function linkFrom(traceparent: string | null | undefined, attributes?: Attributes): Link[] {
  const match = traceparent == null ? null : TRACEPARENT.exec(traceparent);
  if (match === null) return [];
  return [
    {
      context: { traceId: match[1]!, spanId: match[2]!, traceFlags: Number.parseInt(match[3]!, 16), isRemote: true },
      ...(attributes !== undefined && { attributes }),
    },
  ];
}

/** The active span's ids, for a log line (pino mixin); nothing when no span is active. */
export function activeSpanIds(api: OtelApi): { trace_id: string; span_id: string } | Record<string, never> {
  return spanIds(api.trace.getActiveSpan()) ?? {};
}

/** A span's ids for a log line written about it (none without a span). */
export function spanIds(span: Span | undefined): { trace_id: string; span_id: string } | undefined {
  if (span === undefined) return undefined;
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}
