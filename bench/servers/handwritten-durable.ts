// (6) The durable receiver a careful user writes by hand, the ingest baseline: Express 5,
// the raw body, HMAC-SHA256 compared in constant time, one better-sqlite3 INSERT per request
// (WAL, synchronous = FULL), duplicates found by a unique digest of the body. Its table is named
// `inbox` with a `state`, so that the harness checks its durability as it checks ours.
import { createHash } from 'node:crypto';
import Database from 'better-sqlite3';
import express from 'express';
import { announce, serverArgs, signedWith, stopOn } from './common.js';

const { port, host, db: path, secret } = serverArgs();
if (!path) throw new Error('--db is required');
const db = new Database(path);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = FULL');
db.exec(`CREATE TABLE IF NOT EXISTS inbox (
  inbox_id    INTEGER PRIMARY KEY,
  digest      TEXT NOT NULL UNIQUE,
  received_at TEXT NOT NULL,
  kind        TEXT,
  raw         BLOB NOT NULL,
  state       TEXT NOT NULL DEFAULT 'stored'
)`);
const insert = db.prepare('INSERT INTO inbox (digest, received_at, kind, raw) VALUES (?, ?, ?, ?) ON CONFLICT (digest) DO NOTHING');

const app = express();
app.post('/webhooks', express.raw({ type: '*/*', limit: '1mb' }), (req, res) => {
  if (!signedWith(secret, req.body as Buffer, req.get('x-service-signature')))
    return res.status(401).json({ error: { code: 'UNAUTHORIZED', message: 'bad signature', details: {} } });
  const digest = createHash('sha256')
    .update(req.body as Buffer)
    .digest('hex');
  const { changes } = insert.run(digest, new Date().toISOString(), req.get('x-service-event') ?? null, req.body);
  res.status(200).json({ received: true, duplicate: changes === 0 });
});
const server = app.listen(port, host, () => announce(server));
stopOn(server, () => Promise.resolve(db.close()));
