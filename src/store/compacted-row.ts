// A row stored before bodies were compressed, made into the form intake writes now, by the
// upgrade's rewrite of the inbox (sqlite/compact-bodies.ts, postgres/compact-bodies.ts).
import { campaignText } from '../events/index.js';
import { storedBody, type StoredBody } from './bodies.js';

/**
 * A row stored before bodies were compressed, in the form intake writes now: its body compact, and
 * the campaign an accepted body names (which SQL read from the body until then).
 */
export function compactedRow(raw: Uint8Array, verdict: string): StoredBody & { campaignId: string | null } {
  return { ...storedBody(raw), campaignId: verdict === 'accepted' ? campaignOfBody(raw) : null };
}

function campaignOfBody(raw: Uint8Array): string | null {
  try {
    const body = JSON.parse(Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString('utf8')) as unknown;
    if (typeof body !== 'object' || body === null) return null;
    const data = (body as { data?: unknown }).data;
    return typeof data === 'object' && data !== null && !Array.isArray(data) ? campaignText(data as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
