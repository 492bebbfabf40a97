// How a processed body settles its inbox row: one mapping for every path that projects (the
// dispatcher, replay batched and bulk, rebuild batched and bulk), so that they cannot drift apart.
// Pure: the caller stores what it returns.
import type { EnvelopeReading, EventKind } from '../events/index.js';
import type { InboxState } from '../store/inbox-state.js';
import type { Settlement } from '../store/rows.js';
import { keptRedacted, readStored, tombstoned, type Processed } from './batch.js';

/** A row's outcome without its id: its state, reasons, whether its handlers are due, and the redacted body to keep. */
export type Outcome = Omit<Settlement, 'inboxId'>;

/**
 * Whether application handlers want events of this kind. Omitted, no event is made due: a rebuild
 * re-projects without running handlers again (it keeps the marks it finds).
 */
export type WantsHandlers = (kind: EventKind) => boolean;

export function outcomeOf(p: Processed, wantsHandlers?: WantsHandlers): Outcome {
  // An event that names an erased candidate changes nothing and runs no handler (docs/projection.md section 8).
  const handlers = p.state === 'projected' && p.redacted === undefined && (wantsHandlers?.(p.event.event) ?? false);
  return {
    state: p.state,
    reasons: p.state === 'projected' ? null : p.issues,
    handlers,
    ...(p.redacted !== undefined && { raw: p.redacted }),
  };
}

/** A projected batch's settlements: `processed[i]` is what became of `rows[i]`. */
export function settlementsOf(
  rows: ReadonlyArray<{ inbox_id: number }>,
  processed: readonly Processed[],
  wantsHandlers?: WantsHandlers,
): Settlement[] {
  return rows.map((row, i) => ({ inboxId: row.inbox_id, ...outcomeOf(processed[i]!, wantsHandlers) }));
}

/** Whether settling a stored row with this outcome changes it (a bulk rebuild writes only those). */
export function changesRow(row: { state: InboxState; reasons: string | null; raw: Uint8Array }, outcome: Outcome): boolean {
  if (outcome.state !== row.state) return true;
  if ((outcome.reasons === null ? null : JSON.stringify(outcome.reasons)) !== row.reasons) return true;
  return outcome.raw !== undefined && Buffer.compare(Buffer.from(outcome.raw), Buffer.from(row.raw)) !== 0;
}

/**
 * What a body becomes under erasures known in memory (a bulk load, which reads them once): what
 * `projectBatch` makes of it with its look-up, `storedReasons` being its row's when it has one.
 */
export function processedWith(
  raw: Uint8Array,
  reading: EnvelopeReading,
  erased: ReadonlyMap<string, number>,
  storedReasons: string | null = null,
): Processed {
  return keptRedacted(tombstoned(reading, readStored(raw, reading), erased, raw, storedReasons !== null), storedReasons);
}
