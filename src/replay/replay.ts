import { readEnvelope, type EventKind } from '../events/index.js';
import { processDelivery } from '../dispatch/process.js';
import type { Projection } from '../project/write.js';
import { deliveryOf } from '../receive/delivery.js';
import type { SqliteDatabase } from '../store/database.js';
import type { Inbox } from '../store/inbox.js';
import { readSources, type ReplayInput } from './sources.js';

export interface ReplaySummary {
  /** Events read from the inputs. */
  received: number;
  /** Events already in the database (same identity; for bodies that are not events, same bytes). */
  duplicates: number;
  projected: number;
  /** Kept as events of a kind this version does not know. */
  unknown: number;
  /** Kept as dead letters: invalid data, or not an event envelope. */
  dead: number;
  /** Inputs that could not be read at all (missing file, permission …). */
  unreadable: Array<{ origin: string; message: string }>;
}

export interface ReplayParts {
  db: SqliteDatabase;
  inbox: Inbox;
  projection: Projection;
  /** Whether application handlers want events of this kind (they run after the replay commits). */
  wantsHandlers?: (kind: EventKind) => boolean;
  now?: () => number;
}

export interface ReplayOptions {
  /** Events per transaction. Default 2000. */
  batchSize?: number;
  /** Called after each committed batch with the running summary. */
  onProgress?: (summary: ReplaySummary) => void;
}

/**
 * Feeds events through the same path as HTTP (identity, inbox with deduplication, parse,
 * projection, inbox state) without the network: for tests, backfills and the CLI.
 */
export async function replayInto(parts: ReplayParts, inputs: Iterable<ReplayInput> | ReplayInput, options: ReplayOptions = {}): Promise<ReplaySummary> {
  const { db, inbox, projection } = parts;
  const now = parts.now ?? Date.now;
  const batchSize = options.batchSize ?? 2000;
  const summary: ReplaySummary = { received: 0, duplicates: 0, projected: 0, unknown: 0, dead: 0, unreadable: [] };

  const commit = db.transaction((raws: Buffer[]) => {
    const at = new Date(now()).toISOString();
    for (const raw of raws) {
      const envelope = readEnvelope(raw);
      const delivery = deliveryOf(raw, envelope, at, null);
      if (!envelope.ok) {
        // Kept as a dead letter, like a bad HTTP body; the same bad bytes again are a duplicate.
        if (inbox.append(delivery).duplicate) summary.duplicates++;
        else summary.dead++;
        continue;
      }
      if (inbox.has(envelope.identity)) {
        summary.duplicates++;
        continue;
      }
      const processed = processDelivery(projection, raw, envelope);
      const handlers = processed.state === 'projected' && (parts.wantsHandlers?.(processed.event.event) ?? false);
      inbox.appendSettled(
        { ...delivery, identity: envelope.identity, kind: envelope.envelope.event },
        processed.state,
        processed.state === 'projected' ? null : processed.issues,
        handlers,
      );
      summary[processed.state]++;
    }
  });

  let batch: Buffer[] = [];
  const flush = () => {
    commit.immediate(batch);
    batch = [];
    options.onProgress?.({ ...summary });
  };
  for await (const item of readSources(inputs)) {
    if (!item.ok) {
      summary.unreadable.push({ origin: item.origin, message: item.message });
      continue;
    }
    summary.received++;
    batch.push(item.raw);
    if (batch.length >= batchSize) {
      flush();
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
  if (batch.length > 0) flush();
  return summary;
}
