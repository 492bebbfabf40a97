// The hand-written durable receiver on PostgreSQL (the ingest baseline beside serve on
// PostgreSQL): Express 5, HMAC-SHA256 in constant time, one `pg` INSERT per request from a pool
// of 10, duplicates found by a unique digest. `--db` is a postgres:// URL; its table is `inbox`.
import { createHash } from 'node:crypto';
import express from 'express';
import pg from 'pg';
import { announce, serverArgs, signedWith, stopOn } from './common.js';

const { port, host, db: url, secret } = serverArgs();
if (!url) throw new Error('--db <postgres://…> is required');
const pool = new pg.Pool({ connectionString: url, max: 10 });
await pool.query(`CREATE TABLE IF NOT EXISTS inbox (
  inbox_id    bigserial PRIMARY KEY,
  digest      text NOT NULL UNIQUE,
  received_at timestamptz NOT NULL DEFAULT now(),
  kind        text,
  raw         bytea NOT NULL
)`);

const app = express();
app.post('/webhooks', express.raw({ type: '*/*', limit: '1mb' }), async (req, res) => {
  if (!signedWith(secret, req.body as Buffer, req.get('x-service-signature')))
    return res.status(401).json({ error: { code: 'UNAUTHORIZED', message: 'bad signature', details: {} } });
  const digest = createHash('sha256')
    .update(req.body as Buffer)
    .digest('hex');
  try {
    const { rowCount } = await pool.query('INSERT INTO inbox (digest, kind, raw) VALUES ($1, $2, $3) ON CONFLICT (digest) DO NOTHING', [
      digest,
      req.get('x-service-event') ?? null,
      req.body,
    ]);
    res.status(200).json({ received: true, duplicate: rowCount === 0 });
  } catch {
    res.status(503).json({ error: { code: 'STORAGE_UNAVAILABLE', message: 'not stored', details: {} } });
  }
});
const server = app.listen(port, host, () => announce(server));
stopOn(server, () => pool.end());
