import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { EVENT_KINDS, type EventOf, type ServiceEventKind } from '../events/index.js';

/** The fixtures shipped with the package: one real-looking event per kind, scenario streams. */
export const FIXTURES_DIR = fileURLToPath(new URL('../../fixtures/', import.meta.url));

/**
 * A realistic event of the kind (the package's fixture), as a fresh object to modify.
 * `overrides.data` is merged into `data`; other keys replace the envelope's.
 */
export function sampleEvent<K extends ServiceEventKind>(
  kind: K,
  overrides: { timestamp?: string; data?: Record<string, unknown> } = {},
): EventOf<K> {
  if (!EVENT_KINDS.includes(kind)) throw new Error(`unknown event kind "${kind}"; known: ${EVENT_KINDS.join(', ')}`);
  const event = JSON.parse(readFileSync(`${FIXTURES_DIR}events/${kind}.json`, 'utf8')) as { data: Record<string, unknown> };
  return {
    ...event,
    ...(overrides.timestamp !== undefined && { timestamp: overrides.timestamp }),
    data: { ...event.data, ...overrides.data },
  } as unknown as EventOf<K>;
}
