// A test app: an agency backend whose handler records every event it is called for, run as a
// real process on SQLite or PostgreSQL. Each call is appended to a file as one JSON line.
// Usage: node recording-app.mjs <database> <calls-file> [heartbeat ms]
import { appendFileSync } from 'node:fs';
import { createReceiver } from '../../dist/index.js';
import { serveApp } from './app-server.mjs';

const [database, callsFile, heartbeatMs] = process.argv.slice(2);
const receiver = createReceiver({
  database,
  allowUnsigned: true,
  dispatch: { pollMs: 200, handlerRetryDelayMs: 20 },
  ...(heartbeatMs !== undefined && { heartbeat: { everyMs: Number(heartbeatMs) } }),
});
receiver.onAny((event, { identity, inboxId }) => {
  appendFileSync(callsFile, `${JSON.stringify({ identity, kind: event.event, inboxId, pid: process.pid })}\n`);
});
await serveApp(receiver);
