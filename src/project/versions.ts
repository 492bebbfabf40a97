import type { FieldVersions } from './fold.js';
import { CAMPAIGN_COLUMNS, CANDIDATE_COLUMNS, CREDITS_COLUMNS } from '../tables/rows.js';

/**
 * `field_versions` as stored: the distinct order keys of the row, then for each versioned field
 * (in a fixed order) the index of the key that set it, or "." when none did. A row is usually set
 * by a few events, so each long key is written once rather than once per column.
 *   "<key0> <key1>|0011.1..."
 */
export function encodeVersions(versions: FieldVersions, fields: readonly string[]): string {
  const keys: string[] = [];
  let slots = '';
  for (const field of fields) {
    const version = versions[field];
    if (version === undefined) {
      slots += '.';
      continue;
    }
    let index = keys.indexOf(version);
    if (index === -1) index = keys.push(version) - 1;
    slots += index.toString(36);
  }
  return `${keys.join(' ')}|${slots}`;
}

export function decodeVersions(text: string, fields: readonly string[]): FieldVersions {
  const bar = text.lastIndexOf('|');
  const keys = text.slice(0, bar).split(' ');
  const versions: FieldVersions = {};
  for (let i = 0; i < fields.length; i++) {
    const slot = text.charCodeAt(bar + 1 + i);
    if (slot !== 46 /* . */ && !Number.isNaN(slot)) versions[fields[i]!] = keys[parseInt(text[bar + 1 + i]!, 36)]!;
  }
  return versions;
}

/** The versioned fields of each table, in their stored order (never reorder: it is the encoding). */
export const VERSIONED_FIELDS = {
  campaigns: CAMPAIGN_COLUMNS,
  // `responses` is versioned like a column; its rows live in interview_responses.
  candidates: [...CANDIDATE_COLUMNS, 'responses'],
  credits: CREDITS_COLUMNS,
} as const;
