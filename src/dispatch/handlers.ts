import type { EventKind, EventOf, WebhookEvent } from '../events/index.js';
import type { CampaignRow, CandidateRow, CreditsRow } from '../tables/rows.js';

/**
 * The projected row an event's handler sees: its campaign (`campaign.*`, `reconcile.campaign`),
 * the credits (`credits.*`, `reconcile.credits`) or its candidate (the rest), as the events'
 * subjects say (a unit test holds the two together).
 */
export type RowOf<K extends EventKind> = K extends `campaign.${string}` | 'reconcile.campaign'
  ? CampaignRow
  : K extends `credits.${string}` | 'reconcile.credits'
    ? CreditsRow
    : CandidateRow;

/** What a handler is told besides the event. */
export interface HandlerContext<K extends EventKind = EventKind> {
  /** The account the event was sent to (docs/accounts.md); `row` is that account's. */
  account: string;
  /** docs/projection.md identity (within its account): the same event delivered twice has one identity. */
  identity: string;
  /** The inbox row of the event. */
  inboxId: number;
  /** 1 on the first call, then 2, 3 … on retries. */
  attempt: number;
  /** The row as projected once this event's transaction committed (later events may have changed it). */
  row: RowOf<K> | undefined;
  /**
   * Aborted when the call outlives `handlerTimeoutMs` (or the receiver stops): pass it to fetch and
   * friends, or check it, to stop early. A call that ignores it is abandoned, not stopped: it may
   * still finish after its retry has started (handlers run at least once).
   */
  signal: AbortSignal;
}

/** A handler of one kind: called at least once per event, after the event is projected; a rejection is retried. */
export type Handler<K extends EventKind> = (event: EventOf<K>, context: HandlerContext<K>) => unknown;
/** A handler of every kind (`receiver.onAny`). */
export type AnyHandler = (event: WebhookEvent, context: HandlerContext) => unknown;

interface Registered {
  name: string;
  kind: EventKind | '*';
  run: AnyHandler;
}

/** Application handlers by kind, in registration order. */
export function createHandlerRegistry() {
  const registered: Registered[] = [];
  const name = (kind: string, fn: { name: string }, given?: string) =>
    given ?? (fn.name && fn.name !== 'anonymous' ? `${kind}:${fn.name}` : `${kind}#${registered.length + 1}`);
  return {
    on<K extends EventKind>(kind: K, handler: Handler<K>, options: { name?: string } = {}): void {
      registered.push({ kind, name: name(kind, handler, options.name), run: handler as unknown as AnyHandler });
    },
    onAny(handler: AnyHandler, options: { name?: string } = {}): void {
      registered.push({ kind: '*', name: name('*', handler, options.name), run: handler });
    },
    for(kind: string): Registered[] {
      return registered.filter((h) => h.kind === '*' || h.kind === kind);
    },
    get size(): number {
      return registered.length;
    },
  };
}

export type HandlerRegistry = ReturnType<typeof createHandlerRegistry>;
