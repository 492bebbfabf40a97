import type { Clock } from './clock.js';
import type { Emitter } from './events.js';
import type { Life } from './life.js';
import type { Random } from './random.js';
import type { Agency } from './state.js';

/** What every route works with. */
export interface SandboxContext {
  clock: Clock;
  emitter: Emitter;
  life: Life;
  /** Campaign and candidate identifiers, in request order. */
  ids: Random;
  /** The root of every candidate's own stream (derived by candidate id). */
  outcomes: Random;
}

/** An authenticated API request, its body parsed. */
export interface ApiRequest {
  agency: Agency;
  params: Record<string, string>;
  /** Query parameters; a repeated one is an array (and then refused by the schemas). */
  query: Record<string, string | string[]>;
  body: unknown;
}
