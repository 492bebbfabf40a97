// The public surface is deliberate: the root entry holds few functions, constants and classes,
// and each one of the root's and of prequal-hooks/events is named in docs/api.md.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { EVENT_KINDS, KIND_SUBJECTS, RECONCILE_KINDS } from '../../src/events/index.js';
import * as events from '../../src/events/public.js';
import * as root from '../../src/index.js';

const page = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8');

describe('the public surface', () => {
  it('the root entry holds at most 40 functions, constants and classes', () => {
    expect(Object.keys(root).length).toBeLessThanOrEqual(40);
  });

  it.each([
    ['prequal-hooks', root],
    ['prequal-hooks/events', events],
  ])('every value %s exports is named in docs/api.md', (_entry, entry) => {
    const unnamed = Object.keys(entry).filter((name) => !page.includes(`\`${name}`));
    expect(unnamed).toEqual([]);
  });
});

describe('a handler’s row', () => {
  it('is named for every kind the projection knows (its type: public-surface.test-d.ts)', () => {
    expect(Object.keys(KIND_SUBJECTS).sort()).toEqual([...EVENT_KINDS, ...RECONCILE_KINDS].sort());
  });
});
