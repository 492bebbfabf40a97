// Every handler of one projected event, each retried with a doubling delay until it succeeds or
// runs out of attempts, when it is recorded as a dead letter.
import type { Logger } from 'pino';
import { KIND_SUBJECTS, type WebhookEvent } from '../events/index.js';
import type { RowReaders } from '../project/read.js';
import type { HandlerClaimsPort } from '../store/write-ports.js';
import type { HandlerCalls } from './handler-calls.js';
import { callWithRetries } from './handler-retries.js';
import type { HandlerContext, HandlerRegistry } from './handlers.js';
import type { DispatchObserver } from './options.js';
import type { Tracing } from '../tracing/otel.js';
import { handlerCallTraced } from './spans.js';

/** What the handlers of one account's event read their row with and record failures in. */
export interface AccountHandlerTarget {
  store: Pick<HandlerClaimsPort, 'recordHandlerFailure'>;
  rows: RowReaders;
}

/** One claimed event, as its handlers see it. */
export interface HandlerEvent {
  account: string;
  inboxId: number;
  identity: string;
  event: WebhookEvent;
  traceContext?: string | null | undefined;
}

export interface EventHandlersContext {
  /** The account's store and row readers (cached by the caller). */
  accountOf(account: string): AccountHandlerTarget;
  handlers: Pick<HandlerRegistry, 'for'>;
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
export async function callHandlers(context: EventHandlersContext, claimed: HandlerEvent): Promise<boolean> {
  const { stopping, observer } = context;
  const { account, inboxId, identity, event, traceContext } = claimed;
  const target = context.accountOf(account);
  for (const handler of context.handlers.for(event.event)) {
    const result = await callWithRetries(
      async (attempt) => {
        const row = (await rowFor(target.rows, event)) as never;
        const call = () =>
          context.calls.callOnce((signal: AbortSignal) =>
            handler.run(event, { account, identity, inboxId, attempt, row, signal } satisfies HandlerContext),
          );
        if (context.tracing === undefined) await call();
        else await handlerCallTraced(context.tracing, { handler: handler.name, kind: event.event, inboxId, attempt, traceContext }, call);
      },
      {
        attempts: context.attempts,
        retryDelayMs: context.retryDelayMs,
        stopping,
        onAttempt: (outcome) => observer?.handlerCall?.(handler.name, outcome),
      },
    );
    if (result.outcome === 'failed') {
      const message = result.error instanceof Error ? `${result.error.name}: ${result.error.message}` : String(result.error);
      await target.store.recordHandlerFailure({
        inbox_id: inboxId,
        handler: handler.name,
        error: message,
        attempts: result.attempts,
        failed_at: new Date(context.now()).toISOString(),
      });
      context.logger.error(
        { account, inboxId, handler: handler.name, attempts: result.attempts },
        'handler failed; recorded as a dead letter',
      );
    }
    if (stopping.aborted) return false;
  }
  return true;
}
