// A clock that moves only when told: `Date.now()` and `new Date()` answer the time last set.
// Imported before anything else by scripts/screenshots.js, so every timestamp the receiver
// stores or prints (received_at, processed_at, the chart's last hour) is the same on each run.
// Timers (setTimeout) and performance.now() keep real time, so nothing waits forever.
const RealDate = globalThis.Date;
let current = RealDate.parse('2026-11-25T16:30:00.000Z');

class FrozenDate extends RealDate {
  constructor(...args) {
    if (args.length === 0) super(current);
    else super(...args);
  }
  static now() {
    return current;
  }
}
globalThis.Date = FrozenDate;

/** Sets the time, in milliseconds since the epoch or as an ISO 8601 string. */
export function setClock(time) {
  current = typeof time === 'number' ? time : RealDate.parse(time);
  if (!Number.isFinite(current)) throw new Error(`setClock: not a time: ${time}`);
}
