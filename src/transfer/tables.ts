// What `copy` moves from one database to another, table by table: every table of the schema is
// either listed here with its columns or left out with the reason (test/integration/copy-tables.test.ts
// fails on a table or a column a migration adds and this list does not name, on either engine).
// A migration that adds or changes a table changes this list in the same commit.

/**
 * How a column's value is held by each engine, and so how it crosses:
 * - `text`, `integer`, `real`: the same on both (bigint on PostgreSQL for the integers that grow);
 * - `bytes`: BLOB on SQLite, bytea on PostgreSQL (the raw bodies, never decoded);
 * - `flag`: 0/1 on SQLite, boolean on PostgreSQL;
 * - `instant`: ISO 8601 text with milliseconds on SQLite, timestamptz on PostgreSQL;
 * - `epoch-ms`: Unix ms as an integer on SQLite, timestamptz on PostgreSQL (a handler claim's lease).
 */
export type ColumnKind = 'text' | 'integer' | 'real' | 'bytes' | 'flag' | 'instant' | 'epoch-ms';

export interface CopiedTable {
  readonly name: string;
  /** Every column both engines hold, with how it crosses. */
  readonly columns: Readonly<Record<string, ColumnKind>>;
  /** The order rows are read and written in: the primary key (a parent before its children, a seq in order). */
  readonly order: readonly string[];
  /** Columns only SQLite has, made by SQLite again on the way in (a rowid), never read. */
  readonly sqliteOnly?: readonly string[];
  /** PostgreSQL: the column whose sequence (serial or identity) must go on after the copied ids. */
  readonly sequence?: string;
  /** Rows the migrations themselves write (one row each): the copy replaces them. */
  readonly seeded?: boolean;
}

const instants = (...names: string[]) => Object.fromEntries(names.map((n) => [n, 'instant' as const]));
const texts = (...names: string[]) => Object.fromEntries(names.map((n) => [n, 'text' as const]));
const integers = (...names: string[]) => Object.fromEntries(names.map((n) => [n, 'integer' as const]));

/** The columns of section 4 a candidate has, as both `candidates` and a rebuild's copy of it hold them. */
const CANDIDATE_COLUMNS = {
  ...texts('account', 'candidate_id', 'campaign_id', 'first_name', 'last_name', 'email', 'phone', 'status'),
  is_sourced: 'flag',
  call_queued: 'flag',
  sms_sent: 'flag',
  interview_score: 'real',
  ...instants('interview_date', 'interview_started_at'),
  ...texts('availability', 'availability_start', 'salary_expectation', 'candidate_alignment', 'strengths', 'concerns', 'failure_reason'),
} as const;

const CAMPAIGN_COLUMNS = {
  ...texts('account', 'campaign_id', 'job_title', 'contract_type', 'candidate_link', 'status'),
  questions_count: 'integer',
  created_at: 'instant',
} as const;

/** In the order they are written: a table another references comes before it. */
export const COPIED_TABLES: readonly CopiedTable[] = [
  // The registry: accounts, their sealed secrets and API keys (copied as sealed: the same key opens them).
  {
    name: 'accounts',
    columns: {
      ...texts('account', 'name', 'route_key', 'state', 'api_key', 'api_key_key_id', 'feed_token_sha256'),
      ...instants('created_at', 'updated_at'),
    },
    order: ['account'],
  },
  {
    name: 'account_secrets',
    columns: { secret_id: 'integer', ...texts('account', 'ciphertext', 'key_id', 'fingerprint'), ...instants('created_at', 'expires_at') },
    order: ['secret_id'],
    sequence: 'secret_id',
  },
  {
    name: 'account_removals',
    columns: { removal_id: 'integer', ...texts('account', 'reason'), removed_at: 'instant', inbox_rows: 'integer' },
    order: ['removal_id'],
    sequence: 'removal_id',
  },
  { name: 'accounts_version', columns: { ...integers('only_row', 'version'), key_id: 'text' }, order: ['only_row'], seeded: true },
  { name: 'settings', columns: { ...texts('key', 'value'), updated_at: 'instant' }, order: ['key'] },
  // What was received, with its identities, states and claims: the truth the rest is made from.
  {
    name: 'inbox',
    columns: {
      inbox_id: 'integer',
      account: 'text',
      received_at: 'epoch-ms',
      raw: 'bytes',
      identity: 'bytes',
      ...texts('raw_sha256', 'kind', 'verdict', 'secret_id', 'state', 'reasons'),
      attempts: 'integer',
      processed_at: 'epoch-ms',
      handlers_pending: 'flag',
      handler_key: 'bytes',
      handlers_owner: 'text',
      handlers_lease_until: 'epoch-ms',
      trace_context: 'text',
      event_at: 'integer',
      // The body's codec (src/store/bodies.ts): its bytes are copied as stored, the codec with them.
      codec: 'integer',
      campaign_id: 'text',
    },
    order: ['inbox_id'],
    sequence: 'inbox_id',
  },
  {
    name: 'handler_failures',
    columns: { ...integers('failure_id', 'inbox_id', 'attempts'), ...texts('account', 'handler', 'error'), failed_at: 'instant' },
    order: ['failure_id'],
    sequence: 'failure_id',
  },
  // The projected state.
  { name: 'campaigns', columns: { ...CAMPAIGN_COLUMNS, field_versions: 'text' }, order: ['account', 'campaign_id'] },
  {
    name: 'candidates',
    columns: { ...CANDIDATE_COLUMNS, added_at: 'instant', field_versions: 'text' },
    order: ['account', 'candidate_id'],
  },
  {
    name: 'interview_responses',
    columns: { ...texts('account', 'candidate_id', 'question', 'answer', 'explanation'), position: 'integer', score: 'real' },
    order: ['account', 'candidate_id', 'position'],
  },
  {
    name: 'credits',
    columns: { ...texts('account', 'last_campaign_id', 'field_versions'), credits_remaining: 'real', low_threshold: 'real' },
    order: ['account'],
  },
  // Erasures (the audit trail and tombstones) and what their hooks still owe.
  {
    name: 'erasures',
    columns: { erasure_id: 'integer', ...texts('account', 'candidate_id', 'reason'), erased_at: 'instant', events_redacted: 'integer' },
    order: ['erasure_id'],
    sequence: 'erasure_id',
  },
  {
    name: 'erasure_hooks',
    columns: { ...integers('erasure_id', 'rounds'), ...instants('due_at', 'claimed_until'), last_error: 'text' },
    order: ['erasure_id'],
  },
  // The change log, its numbering and what retention dropped; a rebuild under way.
  {
    name: 'changes',
    columns: { ...texts('account', 'entity', 'id', 'op', 'row', 'at', 'events'), seq: 'integer' },
    order: ['account', 'seq'],
    sqliteOnly: ['change_id'],
  },
  { name: 'change_heads', columns: { account: 'text', ...integers('last_seq', 'dropped_through', 'rebuilding_from') }, order: ['account'] },
  { name: 'rebuild_campaigns', columns: CAMPAIGN_COLUMNS, order: ['account', 'campaign_id'] },
  { name: 'rebuild_candidates', columns: CANDIDATE_COLUMNS, order: ['account', 'candidate_id'] },
  {
    name: 'rebuild_credits',
    columns: { ...texts('account', 'last_campaign_id'), credits_remaining: 'real', low_threshold: 'real' },
    order: ['account'],
  },
  // Destinations: where each stands (cursor), what is queued or set aside, their sealed secrets.
  {
    name: 'destinations',
    columns: {
      ...texts('account', 'destination', 'url', 'sealed', 'key_id', 'filter', 'schedule', 'state', 'state_reason', 'lease_owner'),
      ...texts('created_at', 'updated_at', 'kind', 'auth'),
      rate: 'real',
      ...integers('cursor', 'failures', 'lease_until', 'hold'),
    },
    order: ['account', 'destination'],
  },
  {
    name: 'destination_deliveries',
    columns: {
      ...texts('account', 'destination', 'entity', 'entity_id', 'state', 'last_error', 'failed_at'),
      ...integers('seq', 'attempts', 'next_at', 'last_status'),
    },
    order: ['account', 'destination', 'seq'],
  },
  { name: 'destinations_version', columns: integers('only_row', 'version'), order: ['only_row'], seeded: true },
  {
    name: 'operator_events',
    columns: { ...texts('account', 'type', 'destination', 'at', 'reason'), ...integers('seq', 'change_seq') },
    order: ['account', 'seq'],
  },
  { name: 'operator_event_heads', columns: { account: 'text', last_seq: 'integer' }, order: ['account'] },
];

/** The tables `copy` does not carry, and why. */
export const LEFT_OUT: Readonly<Record<string, string>> = {
  schema_migrations: "each engine's own migrations, applied to the target before the copy",
  receivers: 'the heartbeats of processes running on the source, which must be stopped',
  counters: "counted again from the copied rows by the target's own triggers, as every write is",
};
