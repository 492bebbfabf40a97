import {
  erasedBy,
  isEventKind,
  namedCandidate,
  parseEvent,
  parseInstant,
  readEnvelope,
  REDACTED_REASONS,
  REDACTED_REASONS_JSON,
  redactedBody,
  type EnvelopeReading,
  type Issue,
  type WebhookEvent,
} from '../events/index.js';
import type { ProjectionWritesTx } from '../store/write-ports.js';
import type { RowKeys, RowWrites, StoredRow, StoredRows } from '../tables/stored.js';
import type { CampaignRow, CandidateRow, CreditsRow } from '../tables/rows.js';
import { effectsOf } from './effects.js';
import { causeKey, changesOfBatch, type Causes } from './changes.js';
import { applyEffect, emptyState, orderKeyOf, type ProjectableEvent, type ProjectedState, type Versioned } from './fold.js';
import { decodeVersions, encodeVersions, VERSIONED_FIELDS } from './versions.js';

/** What became of one stored body. */
export type Processed = (
  | { state: 'projected'; event: WebhookEvent; identity: string; instant: number }
  | { state: 'unknown' | 'dead'; kind: string | null; issues: Issue[] }
) & {
  /**
   * Set when the body names an erased candidate and must change nothing (docs/projection.md section 8):
   * what to keep instead of the stored body. Such an event has no effect and runs no handler.
   */
  redacted?: Uint8Array;
};

/**
 * Reads a stored body as an event: the one path every event takes, from HTTP or from replay.
 * `unknown` for a kind this version does not know, `dead` for anything else it cannot project.
 */
export function readStored(raw: Uint8Array, alreadyRead?: EnvelopeReading): Processed {
  const envelope = alreadyRead ?? readEnvelope(raw);
  if (!envelope.ok) return { state: 'dead', kind: null, issues: envelope.issues };
  const reading = parseEvent(envelope.envelope);
  if (!reading.ok) {
    return { state: reading.reason === 'UNKNOWN_KIND' ? 'unknown' : 'dead', kind: reading.kind, issues: reading.issues };
  }
  return { state: 'projected', event: reading.event, instant: reading.instant, identity: envelope.identity };
}

/** The rows the events touch: every row an effect names. */
function rowKeysOf(events: readonly ProjectableEvent[]): RowKeys {
  const campaigns = new Set<string>();
  const candidates = new Set<string>();
  let credits = false;
  for (const e of events) {
    for (const effect of effectsOf(e.event, e.instant)) {
      if (effect.table === 'campaigns') campaigns.add(effect.key);
      else if (effect.table === 'candidates') candidates.add(effect.key);
      else credits = true;
    }
  }
  // Sorted: processes that lock overlapping rows take them in one order, so they never deadlock.
  return { campaigns: [...campaigns].sort(), candidates: [...candidates].sort(), credits };
}

function versioned<T>(stored: StoredRow<T>, fields: readonly string[]): Versioned<T> {
  return { row: stored.row, versions: decodeVersions(stored.field_versions, fields) };
}

export function toStored<T>(current: Versioned<T>, fields: readonly string[]): StoredRow<T> {
  return { row: current.row, field_versions: encodeVersions(current.versions, fields) };
}

/** What an effect's row is in a state (undefined: not there yet). */
function rowIn(state: ProjectedState, table: 'campaigns' | 'candidates' | 'credits', key: string): unknown {
  return table === 'credits' ? (state.credits ?? undefined) : state[table].get(key);
}

/**
 * `foldAnyOrder` (fold.ts), noting which events moved which rows: an event is a cause of a row
 * when its effect changed the row or its responses, or named a row new to the table.
 */
function foldNotingCauses(events: readonly ProjectableEvent[], state: ProjectedState, isNew: (key: string) => boolean): Causes {
  const causes: Causes = new Map();
  for (const e of events) {
    const version = orderKeyOf(e);
    for (const effect of effectsOf(e.event, e.instant)) {
      const key = causeKey(effect.table, effect.key);
      const before = rowIn(state, effect.table, effect.key);
      const responses = effect.table === 'candidates' ? state.responses.get(effect.key) : undefined;
      applyEffect(state, effect, version, true);
      const moved =
        rowIn(state, effect.table, effect.key) !== before ||
        (effect.table === 'candidates' && state.responses.get(effect.key) !== responses);
      if (!moved && !isNew(key)) continue;
      const list = causes.get(key);
      if (list === undefined) causes.set(key, [e.identity]);
      else list.push(e.identity);
    }
  }
  return causes;
}

/**
 * Folds events into the rows they touch with the pure last-writer-wins merge, and says which
 * rows changed. Only changed rows are written back, each once, whatever the number of events.
 */
function foldIntoRows(stored: StoredRows, events: readonly ProjectableEvent[]): RowWrites & { causes: Causes } {
  const state: ProjectedState = emptyState();
  const loaded = {
    campaigns: new Map<string, Versioned<CampaignRow>>(),
    candidates: new Map<string, Versioned<CandidateRow>>(),
  };
  for (const [key, row] of stored.campaigns) {
    const v = versioned(row, VERSIONED_FIELDS.campaigns);
    loaded.campaigns.set(key, v);
    state.campaigns.set(key, v);
  }
  for (const [key, row] of stored.candidates) {
    const v = versioned(row, VERSIONED_FIELDS.candidates);
    loaded.candidates.set(key, v);
    state.candidates.set(key, v);
  }
  const loadedCredits: Versioned<CreditsRow> | null = stored.credits ? versioned(stored.credits, VERSIONED_FIELDS.credits) : null;
  state.credits = loadedCredits;

  const causes = foldNotingCauses(events, state, (key) => {
    const [table, id] = [key.slice(0, key.indexOf(':')), key.slice(key.indexOf(':') + 1)];
    if (table === 'credits') return stored.credits?.absent === true;
    return (table === 'campaigns' ? stored.campaigns : stored.candidates).get(id)?.absent === true;
  });

  // mergeEffect returns the row object itself when nothing changed: identity tells what to write.
  // A row new to the table is written even unchanged: naming its key creates it.
  const campaigns: StoredRow<CampaignRow>[] = [];
  for (const [key, current] of state.campaigns) {
    const absent = stored.campaigns.get(key)?.absent === true;
    if (loaded.campaigns.get(key) !== current || absent)
      campaigns.push({ ...toStored(current, VERSIONED_FIELDS.campaigns), ...(absent && { absent }) });
  }
  const candidates: StoredRow<CandidateRow>[] = [];
  for (const [key, current] of state.candidates) {
    const absent = stored.candidates.get(key)?.absent === true;
    if (loaded.candidates.get(key) !== current || absent)
      candidates.push({ ...toStored(current, VERSIONED_FIELDS.candidates), ...(absent && { absent }) });
  }
  const creditsAbsent = stored.credits?.absent === true;
  const credits =
    state.credits !== null && (state.credits !== loadedCredits || creditsAbsent)
      ? { ...toStored(state.credits, VERSIONED_FIELDS.credits), ...(creditsAbsent && { absent: true }) }
      : undefined;
  return { campaigns, candidates, credits, responses: state.responses, causes };
}

/** A body to project, with its row's reasons when read from the inbox (a row set aside has some). */
export interface StoredBody {
  raw: Uint8Array;
  reading?: EnvelopeReading;
  reasons?: string | null;
}

/**
 * A row redacted while set aside keeps its reasons as redaction left them: those its reduced body
 * gives now would only say which fields it lost. Rebuilds and reprocessing leave it as it was.
 */
export function keptRedacted(p: Processed, storedReasons: string | null | undefined): Processed {
  return p.state !== 'projected' && storedReasons === REDACTED_REASONS_JSON ? { ...p, issues: [...REDACTED_REASONS] } : p;
}

/**
 * Projects a batch in the caller's transaction: reads each body, locks the rows the events touch
 * (created empty when new), folds the events into them in memory, writes each changed row once.
 * The caller settles the inbox rows in the same transaction, so both commit together.
 */
export async function projectBatch(
  tx: ProjectionWritesTx,
  bodies: ReadonlyArray<StoredBody>,
  options: { changes?: boolean } = {},
): Promise<Processed[]> {
  const readings = bodies.map((body) => body.reading ?? readEnvelope(body.raw));
  const processed = bodies.map((body, i) => readStored(body.raw, readings[i]));
  // The tombstones first: an event that must change nothing names no row to lock (PostgreSQL
  // creates the rows it locks).
  await markErased(tx, bodies, readings, processed);
  bodies.forEach((body, i) => (processed[i] = keptRedacted(processed[i]!, body.reasons)));
  const live = processed.flatMap((p) => (p.state === 'projected' ? projectable(p) : []));
  if (live.length > 0) {
    const stored = await tx.lockRows(rowKeysOf(live));
    const { causes, ...writes } = foldIntoRows(stored, live);
    await tx.saveRows(writes);
    // Numbered last: on PostgreSQL, numbering holds the account's head until the commit.
    if (options.changes !== false) await tx.recordChanges(changesOfBatch(tx.account, stored, writes, causes));
  }
  return processed;
}

/** What a projected body folds in: the event itself, or only its campaign's trace when it names an erased candidate. */
export function projectable(p: Extract<Processed, { state: 'projected' }>): ProjectableEvent[] {
  return p.redacted === undefined ? [p] : campaignTrace(p);
}

/**
 * What an erased person's event still says: that its campaign exists (a campaign row holds no
 * personal data). Without it, a campaign known only from that person's events would vanish at the
 * next rebuild but not before, and the state would depend on when the erasure ran.
 */
export function campaignTrace(p: ProjectableEvent): ProjectableEvent[] {
  const campaign = (p.event.data as { campaign_id?: unknown }).campaign_id;
  if (typeof campaign !== 'string' || campaign === '') return [];
  const trace = { event: 'reconcile.campaign', timestamp: p.event.timestamp, data: { campaign_id: campaign } } as WebhookEvent;
  return [{ event: trace, instant: p.instant, identity: p.identity }];
}

/**
 * The tombstones of section 8: a body naming an erased candidate, dated at or before its erasure
 * (or written by reconciliation, whatever its date), changes nothing and is redacted. One look-up
 * for the batch, only when some body names a candidate.
 */
async function markErased(
  tx: Pick<ProjectionWritesTx, 'erasures'>,
  bodies: ReadonlyArray<StoredBody>,
  readings: readonly EnvelopeReading[],
  processed: Processed[],
): Promise<void> {
  const named = new Set<string>();
  for (const reading of readings) {
    const candidate = reading.ok ? namedCandidate(reading.envelope.data) : undefined;
    if (candidate !== undefined) named.add(candidate);
  }
  if (named.size === 0) return;
  const erased = await tx.erasures([...named]);
  if (erased.size === 0) return;
  readings.forEach((reading, i) => {
    processed[i] = tombstoned(reading, processed[i]!, erased, bodies[i]!.raw, (bodies[i]!.reasons ?? null) !== null);
  });
}

/**
 * What a body becomes under the tombstones: unchanged when it names no erased candidate (or is a
 * new contact); otherwise redacted, its reasons with it. An event that projects, projects with no
 * effect but its campaign's existence; a body set aside stays set aside (a dead letter stays dead),
 * except a projected event's body already reduced to its keys, which no longer validates: its row
 * tells (`setAside`: a row set aside keeps reasons, a projected one has none).
 */
export function tombstoned(
  reading: EnvelopeReading,
  p: Processed,
  erased: ReadonlyMap<string, number>,
  raw: Uint8Array,
  setAside = false,
): Processed {
  if (!reading.ok || erased.size === 0) return p;
  // A body whose timestamp cannot be read is taken as before the erasure.
  const instant = p.state === 'projected' ? p.instant : (parseInstant(reading.envelope.timestamp) ?? -Infinity);
  if (!erasedBy(reading.envelope, instant, erased)) return p;
  const redacted = redactedBody(raw);
  if (p.state === 'projected') return { ...p, redacted };
  const reduced = Buffer.compare(Buffer.from(redacted), Buffer.from(raw)) === 0;
  if (setAside || !reduced || !isEventKind(reading.envelope.event) || !Number.isFinite(instant))
    return { ...p, issues: [...REDACTED_REASONS], redacted };
  return { state: 'projected', event: reading.envelope as unknown as WebhookEvent, identity: reading.identity, instant, redacted };
}
