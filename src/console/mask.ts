// Names, e-mails and phones of candidates are masked in the console until the operator asks to see
// them: a screen shared or glanced at shows who applied only to whom it should.
import { parseJson } from '../events/index.js';

/** `Jean Dupont` → `J*** D***`. */
export function maskName(name: string): string {
  return name
    .split(/(\s+|-)/)
    .map((part) => (/^\s+$|^-$/.test(part) || part === '' ? part : `${[...part][0]}***`))
    .join('');
}

/** `jean.dupont@example.com` → `j***@example.com`. */
export function maskEmail(email: string): string {
  const at = email.lastIndexOf('@');
  if (at <= 0) return maskName(email);
  return `${[...email][0]}***${email.slice(at)}`;
}

/** `+33612345678` → `+33 6** ** ** 78`; other numbers keep their first three and last two digits. */
export function maskPhone(phone: string): string {
  const compact = phone.replace(/[\s.()-]/g, '');
  const french = /^\+33(\d)\d{6}(\d\d)$/.exec(compact);
  if (french) return `+33 ${french[1]}** ** ** ${french[2]}`;
  if (compact.length <= 5) return '*'.repeat(compact.length);
  return `${compact.slice(0, 3)}${'*'.repeat(compact.length - 5)}${compact.slice(-2)}`;
}

const NAME_KEYS = new Set(['first_name', 'last_name', 'name', 'full_name']);
const EMAIL_KEYS = new Set(['email', 'e_mail']);
const PHONE_KEYS = new Set(['phone', 'phone_number', 'mobile']);

/** A field of a candidate as shown: masked by its key unless revealed. */
export function personal(key: string, value: unknown, reveal: boolean): unknown {
  if (reveal || typeof value !== 'string') return value;
  if (NAME_KEYS.has(key)) return maskName(value);
  if (EMAIL_KEYS.has(key)) return maskEmail(value);
  if (PHONE_KEYS.has(key)) return maskPhone(value);
  return value;
}

/** A copy of a JSON value with the personal fields masked, at any depth. */
function maskJson(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(maskJson);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, typeof inner === 'string' ? personal(key, inner, false) : maskJson(inner)]));
  }
  return value;
}

/** Free text (a body that is not JSON): e-mail addresses and phone-like numbers masked. */
export function maskText(text: string): string {
  // Bounded repetitions: the body is the sender's, and an unbounded `+` before a literal makes
  // these scans quadratic on a long run without one (40 KB of letters took 1.5 s).
  return text
    .replace(/[^\s"'<>@,;:]{1,64}@[^\s"'<>@,;:]{1,253}\.[a-z]{2,24}/gi, (email) => maskEmail(email))
    .replace(/\+?\d[\d .-]{7,24}\d/g, (phone) => maskPhone(phone));
}

/** The most of a body a page shows; the rest is cut, and the page says so. */
export const SHOWN_BODY_CHARS = 128 * 1024;

/**
 * A body as shown: JSON pretty-printed (two-space indent), its personal fields masked unless
 * revealed; a body that is not JSON shown as text, masked the same way.
 */
export function showBody(raw: string, reveal: boolean): string {
  const asText = () => {
    const shown = raw.length > SHOWN_BODY_CHARS ? raw.slice(0, SHOWN_BODY_CHARS) : raw;
    const cut = raw.length > SHOWN_BODY_CHARS ? `\n… (${raw.length - SHOWN_BODY_CHARS} more characters not shown)` : '';
    return (reveal ? shown : maskText(shown)) + cut;
  };
  if (raw.length > SHOWN_BODY_CHARS) return asText();
  try {
    const parsed = parseJson(raw);
    return JSON.stringify(reveal ? parsed : maskJson(parsed), null, 2);
  } catch {
    // Not JSON, or nested deeper than a walk of it can go (JSON.parse takes any depth): as text.
    return asText();
  }
}
