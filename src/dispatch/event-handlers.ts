// Every handler of one projected event, each retried with a doubling delay until it succeeds or
// runs out of attempts, when it is recorded as a dead letter.
import type { Logger } from 'pino';
import { KIND_SUBJECTS, type WebhookEvent } from '../events/index.js';
import type { RowReaders } from '../project/read.js';
import type { Store } from '../store/store.js';
import type { HandlerCalls } from './handler-calls.js';
import { callWithRetries } from './handler-retries.js';
import type { HandlerContext, HandlerRegistry } from './handlers.js';
import type { DispatchObserver } from './options.js';
import type { Tracing } from '../tracing/otel.js';
import { handlerCallTraced } from '../tracing/dispatch-spans.js';

export interface HandlerRetries {
  store: Pick<Store, 'recordHandlerFailure'>;
  handlers: Pick<HandlerRegistry, 'for'>;
  rows: RowReaders;
  calls: Pick<HandlerCalls, 'callOnce'>;
  logger: Pick<Logger, 'error'>;
  observer?: DispatchObserver | undefined;
  now: () => number;
  /** Calls of a failing handler before it becomes a dead letter. */
  attempts: number;
  /** First retry delay (ms), doubled at each attempt. */
  retryDelayMs: number;
  /** Aborted when the dispatcher stops: no retry waits past it, and nothing more is recorded. */
  stopping: AbortSignal;
  tracing?: Tracing | undefined;
}

/** The projected row a handler of this event is given. */
async function rowFor(rows: RowReaders, event: WebhookEvent): Promise<unknown> {
  const data = event.data as { candidate_id?: string; campaign_id?: string };
  const subject = KIND_SUBJECTS[event.event];
  if (subject === 'candidate') return await rows.candidate(data.candidate_id!);
  if (subject === 'campaign') return await rows.campaign(data.campaign_id!);
  return await rows.credits();
}

/** Calls every handler of the event; false when stopped before the end (the handlers stay due). */
export async function callHandlers(
  retries: HandlerRetries,
  inboxId: number,
  identity: string,
  event: WebhookEvent,
  traceContext?: string | null,
): Promise<boolean> {
  const { stopping, observer } = retries;
  for (const handler of retries.handlers.for(event.event)) {
    const result = await callWithRetries(
      async (attempt) => {
        const row = (await rowFor(retries.rows, event)) as never;
        const call = () =>
          retries.calls.callOnce((signal: AbortSignal) =>
            handler.run(event, { identity, inboxId, attempt, row, signal } satisfies HandlerContext),
          );
        if (retries.tracing === undefined) await call();
        else await handlerCallTraced(retries.tracing, { handler: handler.name, kind: event.event, inboxId, attempt, traceContext }, call);
      },
      {
        attempts: retries.attempts,
        retryDelayMs: retries.retryDelayMs,
        stopping,
        onAttempt: (outcome) => observer?.handlerCall?.(handler.name, outcome),
      },
    );
    if (result.outcome === 'failed') {
      const message = result.error instanceof Error ? `${result.error.name}: ${result.error.message}` : String(result.error);
      await retries.store.recordHandlerFailure({
        inbox_id: inboxId,
        handler: handler.name,
        error: message,
        attempts: result.attempts,
        failed_at: new Date(retries.now()).toISOString(),
      });
      retries.logger.error({ inboxId, handler: handler.name, attempts: result.attempts }, 'handler failed; recorded as a dead letter');
    }
    if (stopping.aborted) return false;
  }
  return true;
}
