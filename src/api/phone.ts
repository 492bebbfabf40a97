/**
 * Candidate phone numbers (docs/sandbox.md, "The API"; docs/client.md, "Checked before sending"): French mobile
 * numbers, 06 or 07, in one of three forms: `0612345678`, `06 12 34 56 78` or `+33612345678`.
 * Read into E.164 (`+33612345678`), the form the service sends back in lists and webhooks.
 */
const PHONE_FORMS = ['0612345678', '06 12 34 56 78', '+33612345678'] as const;

/** Why a phone number was refused: not text, none of the three forms, or not a mobile (06/07). */
type PhoneRefusal = 'not_a_string' | 'invalid_format' | 'not_a_mobile';

export type PhoneReading = { ok: true; e164: string } | { ok: false; reason: PhoneRefusal; message: string };

const NATIONAL = /^0(\d)(\d{8})$/;
const PAIRS = /^0(\d)((?: \d{2}){4})$/;
const INTERNATIONAL = /^\+33(\d)(\d{8})$/;

export function readPhone(value: unknown): PhoneReading {
  if (typeof value !== 'string') return { ok: false, reason: 'not_a_string', message: 'the phone number must be a string' };
  const match = NATIONAL.exec(value) ?? PAIRS.exec(value) ?? INTERNATIONAL.exec(value);
  if (match === null) {
    return { ok: false, reason: 'invalid_format', message: `expected one of the forms ${PHONE_FORMS.join(', ')}` };
  }
  const [, lead, rest] = match as unknown as [string, string, string];
  if (lead !== '6' && lead !== '7') {
    return { ok: false, reason: 'not_a_mobile', message: 'only French mobile numbers (06 or 07) are accepted' };
  }
  return { ok: true, e164: `+33${lead}${rest.replaceAll(' ', '')}` };
}

// Deliberately plain: one @, no spaces, a dot in the domain. The service's own rule is not shown.
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** A candidate e-mail address the sandbox accepts (trimmed, at most 254 characters). */
export function isEmail(value: unknown): value is string {
  return typeof value === 'string' && value.length <= 254 && EMAIL.test(value);
}
