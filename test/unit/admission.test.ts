// Who is read and verified first when requests contend for the event loop (src/receive/admission.ts):
// an address over its budget of failures is refused (at its connection or its request) only under
// contention and only while another address is active; requests that verify earn failures back;
// one address's requests beyond its share wait for its own to finish. A body in too many pieces
// for its size is refused; the client key of an IPv6 address is its /64.
import { describe, expect, it } from 'vitest';
import { createAdmission, type Admission, type Turn } from '../../src/receive/admission.js';
import { FREE_PIECES, MIN_PIECE_BYTES, tooFragmented } from '../../src/receive/body-buffer.js';
import { clientKey } from '../../src/receive/client.js';

/** An admission on a clock the test moves, with the loop as busy as the test says. */
function admissionOn(rules: Parameters<typeof createAdmission>[0] = {}) {
  let at = 0;
  let utilization = 0;
  const admission = createAdmission(rules, { now: () => at, utilization: () => utilization });
  return {
    admission,
    advance: (ms: number) => {
      at += ms;
    },
    busy: (value: boolean) => {
      utilization = value ? 1 : 0;
      // The next window reads it.
      at += 250;
    },
  };
}

function turn(admission: Admission, address: string): Turn {
  const entry = admission.enter(address);
  if (!('ok' in entry) || !entry.ok) throw new Error(`expected a turn at once for ${address}, got ${JSON.stringify(entry)}`);
  return entry;
}

/** `n` failed requests of `address`, one after another. */
function fail(admission: Admission, address: string, n: number): void {
  for (let i = 0; i < n; i++) turn(admission, address).leave('failed');
}

describe('admission', () => {
  it('never refuses an address alone, whatever its failures and however busy the loop', () => {
    const { admission, busy } = admissionOn();
    busy(true);
    fail(admission, '10.0.0.2', 50);
    expect(admission.enter('10.0.0.2')).toMatchObject({ ok: true });
    expect(admission.refusesConnection('10.0.0.2')).toBeUndefined();
    expect(admission.refusals()).toEqual({ connection: 0, request: 0 });
  });

  it('refuses an address over its budget while the loop is busy and another is active, with the seconds until it has a failure to spend', () => {
    const { admission, busy, advance } = admissionOn();
    fail(admission, '10.0.0.2', 6);
    turn(admission, '10.0.0.1').leave('verified');
    // Not busy: served.
    expect(admission.enter('10.0.0.2')).toMatchObject({ ok: true });
    busy(true);
    expect(admission.refusesConnection('10.0.0.2')).toBe(2);
    expect(admission.enter('10.0.0.2')).toEqual({ ok: false, retryAfterSeconds: 2 });
    // The sender is served meanwhile.
    expect(admission.enter('10.0.0.1')).toMatchObject({ ok: true });
    // A failure earned back a second: after the wait it was told, the address is served again.
    advance(2000);
    turn(admission, '10.0.0.1').leave('verified');
    expect(admission.enter('10.0.0.2')).toMatchObject({ ok: true });
    expect(admission.refusals()).toEqual({ connection: 1, request: 1 });
  });

  it('holds contention for its hold after the loop was last busy, then serves everyone', () => {
    const { admission, busy, advance } = admissionOn({ contentionHoldMs: 3000 });
    fail(admission, '10.0.0.2', 5);
    busy(true);
    turn(admission, '10.0.0.1').leave('verified');
    expect(admission.enter('10.0.0.2')).toMatchObject({ ok: false });
    busy(false);
    // Still within the hold; the address earned nothing back (the clock moved 250 ms since).
    advance(500);
    turn(admission, '10.0.0.1').leave('verified');
    expect(admission.contended()).toBe(true);
    advance(3000);
    turn(admission, '10.0.0.1').leave('verified');
    expect(admission.contended()).toBe(false);
    expect(admission.enter('10.0.0.2')).toMatchObject({ ok: true });
  });

  it('lets an address whose requests verify keep its share, even when some of them fail', () => {
    const { admission, busy } = admissionOn();
    busy(true);
    turn(admission, '10.0.0.9').leave('verified');
    for (let i = 0; i < 40; i++) {
      turn(admission, '10.0.0.1').leave(i % 2 === 0 ? 'failed' : 'verified');
      turn(admission, '10.0.0.9').leave('other');
    }
    expect(admission.enter('10.0.0.1')).toMatchObject({ ok: true });
    expect(admission.refusals()).toEqual({ connection: 0, request: 0 });
  });

  it('does not count a client that went away, or a body refused for a full budget, as a failure', () => {
    const { admission, busy } = admissionOn();
    busy(true);
    turn(admission, '10.0.0.1').leave('verified');
    for (let i = 0; i < 20; i++) turn(admission, '10.0.0.2').leave('other');
    turn(admission, '10.0.0.1').leave('verified');
    expect(admission.enter('10.0.0.2')).toMatchObject({ ok: true });
  });

  it('makes the requests of an address past its share wait, unread, for its own to finish, while another address is served at once', async () => {
    const { admission, busy } = admissionOn({ share: 2 });
    busy(true);
    turn(admission, '10.0.0.1').leave('verified');
    const [first, second] = [turn(admission, '10.0.0.2'), turn(admission, '10.0.0.2')];
    const third = admission.enter('10.0.0.2');
    const fourth = admission.enter('10.0.0.2');
    expect('turn' in third && 'turn' in fourth).toBe(true);
    if (!('turn' in third) || !('turn' in fourth)) return;
    expect(admission.enter('10.0.0.1')).toMatchObject({ ok: true });
    // The fourth's client goes away: the third is next when one of the first two finishes.
    fourth.cancel();
    expect(await fourth.turn).toBeUndefined();
    let thirdTurn: Turn | undefined;
    void third.turn.then((t) => (thirdTurn = t));
    await Promise.resolve();
    expect(thirdTurn).toBeUndefined();
    first.leave('verified');
    expect(await third.turn).toMatchObject({ ok: true });
    second.leave('verified');
  });

  it('never refuses or holds anyone while the loop is not busy', () => {
    const { admission } = admissionOn({ share: 1 });
    fail(admission, '10.0.0.2', 30);
    turn(admission, '10.0.0.1');
    expect(admission.enter('10.0.0.1')).toMatchObject({ ok: true });
    expect(admission.enter('10.0.0.2')).toMatchObject({ ok: true });
    expect(admission.refusesConnection('10.0.0.2')).toBeUndefined();
  });

  it('refuses rules that cannot work, naming the rule', () => {
    expect(() => createAdmission({ share: 0 })).toThrow(/admission\.share must be a number above 0/);
    expect(() => createAdmission({ failuresPerSecond: Number.NaN })).toThrow(/admission\.failuresPerSecond/);
    expect(() => createAdmission({ contentionUtilization: 1.5 })).toThrow(/admission\.contentionUtilization/);
  });

  it('counts an IPv6 address by its /64 and an IPv4-mapped one as its IPv4 address', () => {
    expect(clientKey('2001:db8:1:2:3:4:5:6')).toBe('2001:db8:1:2::/64');
    expect(clientKey('2001:db8:1:2::9')).toBe(clientKey('2001:0db8:0001:0002:ffff::1'));
    expect(clientKey('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(clientKey('::ffff:127.0.0.2')).toBe('127.0.0.2');
    expect(clientKey('127.0.0.2')).toBe('127.0.0.2');
    const { admission, busy } = admissionOn();
    fail(admission, '2001:db8:1:2::1', 3);
    fail(admission, '2001:db8:1:2::2', 3);
    busy(true);
    turn(admission, '10.0.0.1').leave('verified');
    expect(admission.enter('2001:db8:1:2::3')).toMatchObject({ ok: false });
  });
});

describe('a body in pieces', () => {
  it('is refused once past the free pieces, when its pieces bring less than the minimum on average', () => {
    expect(tooFragmented(FREE_PIECES, FREE_PIECES)).toBe(false);
    expect(tooFragmented(FREE_PIECES + 1, FREE_PIECES + 1)).toBe(true);
    // A real sender's pieces: TCP segments of a slow link, or chunks of a few hundred bytes.
    for (const size of [MIN_PIECE_BYTES, 536, 1448, 16 * 1024]) {
      for (let pieces = 1; pieces <= 5000; pieces += 37) expect(tooFragmented(pieces, pieces * size)).toBe(false);
    }
  });
});
