// The dispatcher's spans: each projection batch and each handler call is a messaging "process"
// span linked to the request span of every row it processes, through the traceparent stored with
// the inbox row (processing runs later, often in another process, so it is a link, not a parent).
import type { InboxRow } from '../store/rows.js';
import { linkFrom, SpanKind, StatusCode, type Tracing } from '../tracing/otel.js';

const MESSAGING = { 'messaging.system': 'prequal-hooks', 'messaging.operation.type': 'process' } as const;

/** Records a projection batch that ran from `startTime` (epoch ms) to now, linked to its rows' requests. */
export function recordProjection(tracing: Tracing, startTime: number, rows: ReadonlyArray<{ row: InboxRow; state: string }>): void {
  const links = rows.flatMap(({ row, state }) =>
    linkFrom(row.trace_context, { 'prequal_hooks.inbox_id': row.inbox_id, 'prequal_hooks.outcome': state }),
  );
  const kinds = [...new Set(rows.map(({ row }) => row.kind ?? 'unknown'))].sort().join(',');
  // A root span: the drain runs in whatever request's async context woke it, not within it.
  tracing.tracer
    .startSpan(
      'project inbox',
      {
        kind: SpanKind.CONSUMER,
        startTime,
        links,
        attributes: {
          ...MESSAGING,
          'messaging.operation.name': 'project',
          'messaging.batch.message_count': rows.length,
          'prequal_hooks.event.kinds': kinds,
          'prequal_hooks.set_aside': rows.filter(({ state }) => state !== 'projected').length,
        },
      },
      tracing.api.ROOT_CONTEXT,
    )
    .end();
}

/** Calls one handler within a "process" span linked to the request that brought its event. */
export async function handlerCallTraced<T>(
  tracing: Tracing,
  call: { handler: string; kind: string; inboxId: number; attempt: number; traceContext: string | null | undefined },
  run: () => Promise<T>,
): Promise<T> {
  const { api, tracer } = tracing;
  const span = tracer.startSpan(
    `handle ${call.kind}`,
    {
      kind: SpanKind.CONSUMER,
      links: linkFrom(call.traceContext),
      attributes: {
        ...MESSAGING,
        'messaging.operation.name': 'handle',
        'prequal_hooks.handler': call.handler,
        'prequal_hooks.event.kind': call.kind,
        'prequal_hooks.inbox_id': call.inboxId,
        'prequal_hooks.attempt': call.attempt,
      },
    },
    api.ROOT_CONTEXT,
  );
  try {
    const value = await api.context.with(api.trace.setSpan(api.ROOT_CONTEXT, span), run);
    span.setAttribute('prequal_hooks.outcome', 'ok');
    return value;
  } catch (error) {
    // The error's class only: its message may quote the event.
    span.setAttributes({ 'prequal_hooks.outcome': 'failed', 'error.type': error instanceof Error ? error.name : typeof error });
    span.setStatus({ code: StatusCode.ERROR });
    throw error;
  } finally {
    span.end();
  }
}
