// Which changes a destination receives (docs/destinations.md): an entity, a campaign, a least
// interview score, all of which must hold. An erase change passes every filter that lets
// candidates through, whatever its campaign or score: its row is gone, and the person's data may
// have reached the destination before, so the erasure must reach it too.
import type { Change } from '../project/changes.js';
import type { ChangeEntity } from '../tables/changes.js';
import { DestinationRequestError } from './errors.js';

export interface DestinationFilter {
  entity?: ChangeEntity;
  /** A candidate's `campaign_id`, or the campaign's id. */
  campaign?: string;
  /** Candidates whose `interview_score` is at least this. */
  min_score?: number;
}

const ENTITIES: readonly ChangeEntity[] = ['campaign', 'candidate', 'credits'];
const FIELDS = ['entity', 'campaign', 'min_score'] as const;

/** `entity=candidate`, `campaign=ID`, `min_score=7`, each given once. */
export function parseFilter(terms: readonly string[]): DestinationFilter {
  const filter: DestinationFilter = {};
  for (const term of terms) {
    const at = term.indexOf('=');
    const field = at < 0 ? term : term.slice(0, at);
    const value = at < 0 ? '' : term.slice(at + 1);
    if (!(FIELDS as readonly string[]).includes(field))
      throw new DestinationRequestError(`--filter "${term}": unknown field "${field}"; use ${FIELDS.map((f) => `${f}=…`).join(', ')}`);
    if (field in filter) throw new DestinationRequestError(`--filter ${field} is given twice`);
    if (value === '') throw new DestinationRequestError(`--filter ${field} needs a value (${field}=…)`);
    if (field === 'entity') {
      if (!(ENTITIES as readonly string[]).includes(value))
        throw new DestinationRequestError(`--filter entity must be ${ENTITIES.join(', ')}, got "${value}"`);
      filter.entity = value as ChangeEntity;
    } else if (field === 'campaign') {
      filter.campaign = value;
    } else {
      const score = Number(value);
      if (!Number.isFinite(score) || !/^-?\d+(\.\d+)?$/.test(value))
        throw new DestinationRequestError(`--filter min_score must be a number, got "${value}"`);
      filter.min_score = score;
    }
  }
  return filter;
}

/** What a filter reads of a change: its entity, key, operation and row, each entity its own. */
export type FilteredChange = Change extends infer Each ? (Each extends Change ? Pick<Each, 'entity' | 'id' | 'op' | 'row'> : never) : never;

/** Whether the change reaches a destination with this filter. */
export function passes(filter: DestinationFilter, change: FilteredChange): boolean {
  if (filter.entity !== undefined && change.entity !== filter.entity) return false;
  if (change.op === 'erase') return true;
  if (filter.campaign !== undefined) {
    const campaign = change.entity === 'campaign' ? change.id : change.entity === 'candidate' ? change.row.campaign_id : undefined;
    if (campaign !== filter.campaign) return false;
  }
  if (filter.min_score !== undefined) {
    if (change.entity !== 'candidate') return false;
    const score = 'interview_score' in change.row ? change.row.interview_score : null; // none once erased
    if (typeof score !== 'number' || score < filter.min_score) return false;
  }
  return true;
}

/** The filter as stored and listed: `{}` for everything. */
export function filterOf(json: string): DestinationFilter {
  return JSON.parse(json) as DestinationFilter;
}
