import { orderKey, type WebhookEvent } from '../events/index.js';
import { effectsOf, type Effect } from './effects.js';
import {
  emptyCampaign,
  emptyCandidate,
  emptyCredits,
  type CampaignRow,
  type CandidateRow,
  type CreditsRow,
  type InterviewResponse,
} from '../tables/rows.js';

// The pure heart of the projection: no clock, no database, no logger. The SQL writer and the
// property tests both go through `mergeEffect`.

/** For each column, the order key of the event that last set it. */
export type FieldVersions = Record<string, string>;

/** A projected row and, for each of its columns, the order key of the event that last set it. */
export interface Versioned<T> {
  /** The row. */
  row: T;
  /** For each column, the order key (`orderKey`) of the event that last set it. */
  versions: Record<string, string>;
}

/** An event ready to project: parsed, with its instant and identity. */
export interface ProjectableEvent {
  /** The parsed event. */
  event: WebhookEvent;
  /** The instant of its timestamp, in Unix ms. */
  instant: number;
  /** Its identity (docs/projection.md section 1). */
  identity: string;
}

export function orderKeyOf(e: ProjectableEvent): string {
  return orderKey(e.instant, e.event.event, e.identity);
}

/**
 * Last-writer-wins per column: a column takes the effect's value only when the effect comes
 * later in docs/projection.md's order than whatever set it before. Applying a set of events in any
 * order, any number of times, gives the state that in-order application gives.
 * Returns the columns that changed (empty when the effect is stale or a repeat).
 */
function mergeEffect<T extends object>(
  current: Versioned<T>,
  set: Record<string, unknown>,
  version: string,
): { next: Versioned<T>; changed: string[] } {
  const changed = laterThan(current.versions, Object.keys(set), version);
  if (changed.length === 0) return { next: current, changed };
  const row = { ...current.row } as Record<string, unknown>;
  const versions = { ...current.versions };
  for (const column of changed) {
    row[column] = set[column];
    versions[column] = version;
  }
  return { next: { row: row as T, versions }, changed };
}

/** The columns that an effect of order key `version` takes: those last set by an earlier event, or never. */
function laterThan(versions: FieldVersions, columns: readonly string[], version: string): string[] {
  const taken: string[] = [];
  for (const column of columns) {
    const seen = versions[column];
    if (seen === undefined || seen < version) taken.push(column);
  }
  return taken;
}

/** The projection held in memory, as the fold functions build it: the rows the database would hold. */
export interface ProjectedState {
  /** Campaigns by `campaign_id`. */
  campaigns: Map<string, Versioned<CampaignRow>>;
  /** Candidates by `candidate_id`. */
  candidates: Map<string, Versioned<CandidateRow>>;
  /** Interview responses by `candidate_id`, in the order asked. */
  responses: Map<string, InterviewResponse[]>;
  /** The account's credits, or null before any credits event. */
  credits: Versioned<CreditsRow> | null;
}

export function emptyState(): ProjectedState {
  return { campaigns: new Map(), candidates: new Map(), responses: new Map(), credits: null };
}

/** Applies one effect to an in-memory state (mutating the maps, not the rows). */
export function applyEffect(state: ProjectedState, effect: Effect, version: string, lastWriterWins: boolean): void {
  const merge = <T extends object>(current: Versioned<T>, set: Record<string, unknown>) =>
    lastWriterWins ? mergeEffect(current, set, version) : overwrite(current, set, version);
  switch (effect.table) {
    case 'campaigns': {
      const current = state.campaigns.get(effect.key) ?? { row: emptyCampaign(effect.key), versions: {} };
      state.campaigns.set(effect.key, merge(current, effect.set).next);
      return;
    }
    case 'candidates': {
      const { responses, ...set } = effect.set;
      const current = state.candidates.get(effect.key) ?? { row: emptyCandidate(effect.key), versions: {} };
      const { next, changed } = merge(current, responses === undefined ? set : { ...set, responses: null });
      if (changed.includes('responses')) {
        state.responses.set(effect.key, responses!);
        delete (next.row as unknown as Record<string, unknown>).responses;
      }
      state.candidates.set(effect.key, next);
      return;
    }
    case 'credits': {
      state.credits = merge(state.credits ?? { row: emptyCredits(), versions: {} }, effect.set).next;
      return;
    }
  }
}

/** The literal reading of docs/projection.md: every carried field overwrites, in the order given. */
function overwrite<T extends object>(current: Versioned<T>, set: Record<string, unknown>, version: string) {
  const versions = { ...current.versions };
  for (const column of Object.keys(set)) versions[column] = version;
  return { next: { row: { ...current.row, ...set } as T, versions }, changed: Object.keys(set) };
}

/** Folds events in the order given with last-writer-wins per column (what the store does). */
export function foldAnyOrder(events: Iterable<ProjectableEvent>, state: ProjectedState = emptyState()): ProjectedState {
  for (const e of events) {
    const version = orderKeyOf(e);
    for (const effect of effectsOf(e.event, e.instant)) applyEffect(state, effect, version, true);
  }
  return state;
}

/**
 * The reference: drop repeated identities, sort by docs/projection.md's order, and apply each
 * event's effects by plain overwrite. The property tests hold everything else to this.
 */
export function foldInOrder(events: Iterable<ProjectableEvent>): ProjectedState {
  const distinct = new Map<string, ProjectableEvent>();
  for (const e of events) distinct.set(e.identity, e);
  const sorted = [...distinct.values()]
    .map((e) => ({ e, key: orderKeyOf(e) }))
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const state = emptyState();
  for (const { e, key } of sorted) {
    for (const effect of effectsOf(e.event, e.instant)) applyEffect(state, effect, key, false);
  }
  return state;
}
