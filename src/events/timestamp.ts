// One parser for every timestamp the service sends: identity, order and storage all call it.
// Exactly docs/projection.md section 2: ISO 8601 extended format, seconds required, any number of
// fraction digits after a point, and a zone `Z` or `±hh:mm`. No other spelling (no zone, basic
// format, `±hh` or `±hhmm` zones, missing seconds, comma decimals, lower-case `t` or `z`): one
// spelling per instant keeps "is this a valid event?" the same question for every reader.
const ISO_WITH_ZONE = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:(Z)|([+-])(\d{2}):(\d{2}))$/;

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function daysIn(year: number, month: number): number {
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  return month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1]!;
}

/**
 * The instant of an ISO 8601 timestamp as UTC milliseconds, truncated to the millisecond
 * (docs/projection.md: instants compare at millisecond precision). `null` when the text is not
 * in the contract's form (`2026-11-20T10:00:00Z`, `2026-11-20T11:00:00.5+01:00`), or names a day
 * or time that does not exist.
 */
export function parseInstant(text: string): number | null {
  const m = ISO_WITH_ZONE.exec(text);
  if (m === null) return null;
  const [, y, mo, d, h, mi, s, frac, zulu, sign, oh, om] = m;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return null;
  if (hour > 23 || minute > 59 || second > 59) return null;
  let offsetMinutes = 0;
  if (zulu === undefined) {
    const offH = Number(oh);
    const offM = Number(om);
    if (offH > 23 || offM > 59) return null;
    offsetMinutes = (sign === '-' ? -1 : 1) * (offH * 60 + offM);
  }
  const millis = frac === undefined ? 0 : Number(frac.slice(0, 3).padEnd(3, '0'));
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, millis);
  return date.getTime() - offsetMinutes * 60_000;
}

/** The stored text form of an instant: UTC with milliseconds, `2026-11-20T10:00:00.000Z`. */
export function formatInstant(instant: number): string {
  return new Date(instant).toISOString();
}

/** `parseInstant` then `formatInstant`; `null` when the text is not a valid timestamp. */
export function normaliseTimestamp(text: string): string | null {
  const instant = parseInstant(text);
  return instant === null ? null : formatInstant(instant);
}
