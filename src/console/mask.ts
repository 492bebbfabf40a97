// Names, e-mails and phones of candidates are masked in the console until the operator asks to see
// them: a screen shared or glanced at shows who applied only to whom it should.

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
export function maskJson(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(maskJson);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, typeof inner === 'string' ? personal(key, inner, false) : maskJson(inner)]));
  }
  return value;
}

/** Free text (a body that is not JSON): e-mail addresses and phone-like numbers masked. */
export function maskText(text: string): string {
  return text
    .replace(/[^\s"'<>@,;:]+@[^\s"'<>@,;:]+\.[a-z]{2,}/gi, (email) => maskEmail(email))
    .replace(/\+?\d[\d .-]{7,}\d/g, (phone) => maskPhone(phone));
}

/**
 * A body as shown: JSON pretty-printed (two-space indent), its personal fields masked unless
 * revealed; a body that is not JSON shown as text, masked the same way.
 */
export function showBody(raw: string, reveal: boolean): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return reveal ? raw : maskText(raw);
  }
  return JSON.stringify(reveal ? parsed : maskJson(parsed), null, 2);
}
