// One handler call at a time through a bounded number of slots, each within its timeout: a call
// that outlives it is abandoned (its signal aborted, its slot given back) and counted as stuck
// until it settles.
import PQueue from 'p-queue';

/** A handler call that outlived `handlerTimeoutMs`: a failed attempt, retried like an exception. */
export class HandlerTimeoutError extends Error {
  /** Always `HandlerTimeoutError`, to tell it apart from other errors. */
  override name = 'HandlerTimeoutError';
  constructor(
    /** The limit it outlived (`handlerTimeoutMs`), in ms. */
    readonly timeoutMs: number,
  ) {
    super(`the handler did not settle within ${timeoutMs} ms`);
  }
}

export interface HandlerCallOptions {
  /** Calls running at once. */
  concurrency: number;
  timeoutMs: number;
  /** Aborted when the dispatcher stops: every call still running is abandoned (not counted as stuck). */
  stopping: AbortSignal;
}

export function createHandlerCalls({ concurrency, timeoutMs, stopping }: HandlerCallOptions) {
  const slots = new PQueue({ concurrency });
  // Calls abandoned at their timeout that have not settled since: they may hold resources.
  let stuckCalls = 0;

  /**
   * One call, within its timeout. The slot is given back at the timeout whether or not the call
   * settles; a call still running then is counted as stuck until it settles.
   */
  function callOnce(run: (signal: AbortSignal) => unknown): Promise<unknown> {
    const controller = new AbortController();
    return slots.add(
      () =>
        new Promise((resolve, reject) => {
          let abandoned = false;
          // Abandoned at the timeout (counted as stuck until it settles), or when the receiver
          // stops: either way its signal is aborted and no timer of ours outlives it.
          const abandon = (error: Error, stuck: boolean) => {
            if (abandoned) return;
            abandoned = true;
            clearTimeout(timer);
            stopping.removeEventListener('abort', onStop);
            if (stuck) stuckCalls++;
            countedStuck = stuck;
            controller.abort(error);
            reject(error);
          };
          let countedStuck = false;
          const timer = setTimeout(() => abandon(new HandlerTimeoutError(timeoutMs), true), timeoutMs);
          const onStop = () => abandon(new Error('the receiver stopped'), false);
          stopping.addEventListener('abort', onStop, { once: true });
          const settled = () => {
            if (countedStuck) stuckCalls--;
            if (abandoned) return false;
            abandoned = true;
            clearTimeout(timer);
            stopping.removeEventListener('abort', onStop);
            return true;
          };
          Promise.resolve()
            .then(() => run(controller.signal))
            .then(
              (value) => settled() && resolve(value),
              (error: unknown) => settled() && reject(error),
            );
        }),
    );
  }

  return {
    callOnce,
    /** Handler calls abandoned at their timeout that have not settled since. */
    stuck: (): number => stuckCalls,
    /** Resolves once no call holds a slot or waits for one. */
    onIdle: (): Promise<void> => slots.onIdle(),
  };
}

export type HandlerCalls = ReturnType<typeof createHandlerCalls>;
