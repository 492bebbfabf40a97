// The event `prequal-hooks send <kind>` posts: the package's sample of the kind, stamped now,
// with the fields the user changed through `--set path=value`.
import { EVENT_KINDS, formatInstant, isServiceEventKind } from '../events/index.js';
import { sampleEvent } from '../testing/samples.js';
import { UsageError } from './args.js';

/** JSON when the text parses as JSON (9.5, true, null, "quoted", {...}), the text itself otherwise. */
function fieldValue(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Sets `value` at a dotted path such as `data.interview_score` or `data.responses.0.score`. */
function setAt(target: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split('.');
  if (keys.some((key) => key === '' || key === '__proto__')) throw new UsageError(`--set ${path}: not a field path`);
  let node: Record<string, unknown> = target;
  for (const [i, key] of keys.slice(0, -1).entries()) {
    node[key] ??= {};
    const next = node[key];
    if (next === null || typeof next !== 'object') {
      throw new UsageError(`--set ${path}: ${keys.slice(0, i + 1).join('.')} is not an object`);
    }
    node = next as Record<string, unknown>;
  }
  node[keys.at(-1)!] = value;
}

/** A sample event of `kind` with timestamp `now`, then each `path=value` of `sets` applied in order. */
export function sampleToSend(kind: string, sets: readonly string[], now: number): Record<string, unknown> {
  if (!isServiceEventKind(kind)) throw new UsageError(`unknown event kind "${kind}"; the kinds are ${EVENT_KINDS.join(', ')}`);
  const event = sampleEvent(kind, { timestamp: formatInstant(now) }) as unknown as Record<string, unknown>;
  for (const set of sets) {
    const equals = set.indexOf('=');
    if (equals <= 0) throw new UsageError(`--set takes path=value, such as data.interview_score=9.5, got "${set}"`);
    setAt(event, set.slice(0, equals), fieldValue(set.slice(equals + 1)));
  }
  return event;
}
