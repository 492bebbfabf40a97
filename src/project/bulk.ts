import type { BulkLoad } from '../store/write-ports.js';
import type { StagedEffect, StoredRow } from '../tables/stored.js';
import { identityOfOrderKey } from '../events/index.js';
import { toStored } from './batch.js';
import { causeKey, changesOfBatch, type Causes } from './changes.js';
import { effectsOf, type Effect } from './effects.js';
import { applyEffect, emptyState, orderKeyOf, type ProjectableEvent, type ProjectedState, type Versioned } from './fold.js';
import { VERSIONED_FIELDS } from './versions.js';

/** An event's effects as a bulk load stages them: with its order key, the columns as JSON. */
export function stagedEffectsOf(e: ProjectableEvent): StagedEffect[] {
  const version = orderKeyOf(e);
  return effectsOf(e.event, e.instant).map((effect) => {
    const set = effect.set as Record<string, unknown>;
    let empty = true;
    for (const _ in set) {
      empty = false;
      break;
    }
    return { table: effect.table, key: effect.key, version, set: empty ? '' : JSON.stringify(set) };
  });
}

/**
 * Folds a bulk load's staged effects into the empty projected tables: they come sorted by row, so
 * each row is folded in memory with the same last-writer-wins merge as every other path
 * (`applyEffect`) and inserted once, in key order. Memory holds one chunk and the rows it names.
 * Returns how many rows were written.
 */
export function projectStaged(bulk: BulkLoad, chunk = 1000): number {
  let rows = 0;
  let state = emptyState();
  // Which events made or moved each row, for the feed (every row is new to the tables).
  const causes: Causes = new Map();
  for (const effects of bulk.sortedEffects(chunk)) {
    for (const staged of effects) {
      const set = staged.set === '' ? {} : (JSON.parse(staged.set) as Record<string, unknown>);
      const key = causeKey(staged.table, staged.key);
      const before = staged.table === 'credits' ? state.credits : state[staged.table].get(staged.key);
      applyEffect(state, { table: staged.table, key: staged.key, set } as Effect, staged.version, true);
      const after = staged.table === 'credits' ? state.credits : state[staged.table].get(staged.key);
      if (before !== undefined && before !== null && after === before) continue;
      const list = causes.get(key);
      if (list === undefined) causes.set(key, [identityOfOrderKey(staged.version)]);
      else list.push(identityOfOrderKey(staged.version));
    }
    // The chunk's last row may go on in the next chunk: it stays in memory to be written with it.
    const last = effects[effects.length - 1]!;
    const next = emptyState();
    if (last.table === 'campaigns') {
      next.campaigns.set(last.key, state.campaigns.get(last.key)!);
      state.campaigns.delete(last.key);
    } else if (last.table === 'candidates') {
      next.candidates.set(last.key, state.candidates.get(last.key)!);
      state.candidates.delete(last.key);
      const responses = state.responses.get(last.key);
      if (responses !== undefined) next.responses.set(last.key, responses);
      state.responses.delete(last.key);
    } else {
      next.credits = state.credits;
      state.credits = null;
    }
    rows += save(bulk, state, causes);
    state = next;
  }
  return rows + save(bulk, state, causes);
}

function save(bulk: BulkLoad, state: ProjectedState, causes: Causes): number {
  const absent = <T>(rows: Map<string, Versioned<T>>, fields: readonly string[]): StoredRow<T>[] =>
    [...rows.values()].map((row) => ({ ...toStored(row, fields), absent: true }));
  const campaigns = absent(state.campaigns, VERSIONED_FIELDS.campaigns);
  const candidates = absent(state.candidates, VERSIONED_FIELDS.candidates);
  const credits = state.credits === null ? undefined : { ...toStored(state.credits, VERSIONED_FIELDS.credits), absent: true };
  const writes = { campaigns, candidates, credits, responses: state.responses };
  bulk.saveRows(writes);
  bulk.recordChanges(changesOfBatch(bulk.account, { campaigns: new Map(), candidates: new Map(), credits: undefined }, writes, causes));
  for (const row of campaigns) causes.delete(causeKey('campaigns', row.row.campaign_id));
  for (const row of candidates) causes.delete(causeKey('candidates', row.row.candidate_id));
  if (credits !== undefined) causes.delete(causeKey('credits', 'account'));
  return campaigns.length + candidates.length + (credits === undefined ? 0 : 1);
}
