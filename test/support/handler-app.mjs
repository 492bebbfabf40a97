// A test app: an agency backend with one handler, run as a real process (several share one
// PostgreSQL database in the replica tests). Its handler records each call in handler_calls.
// Usage: node handler-app.mjs <postgres-url> <secret>
import pg from 'pg';
import { createReceiver } from '../../dist/index.js';
import { serveApp } from './app-server.mjs';

const [url, secret] = process.argv.slice(2);
const calls = new pg.Pool({ connectionString: url, max: 2 });
const receiver = createReceiver({
  database: url,
  secret,
  dispatch: { handlerLeaseMs: 1500, handlerRetryDelayMs: 20, pollMs: 200 },
});
receiver.onAny(async (event, { identity, inboxId }) => {
  await calls.query('INSERT INTO handler_calls (candidate_id, identity, inbox_id, pid) VALUES ($1, $2, $3, $4)', [
    event.data.candidate_id ?? null,
    identity,
    inboxId,
    process.pid,
  ]);
});
await serveApp(receiver, () => calls.end());
