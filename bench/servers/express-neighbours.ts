// One Express app with a neighbour route (GET /ping) beside its webhook route: the prequal-hooks
// middleware (durable), or with --noop a route that only reads the body. The neighbours bench
// compares /ping's latency between the two while webhooks arrive at a fixed rate.
import express from 'express';
import type { Receiver } from 'prequal-hooks';
import { distModule } from '../lib/paths.js';
import { announce, serverArgs, stopOn } from './common.js';

const noop = process.argv.includes('--noop');
const argv = process.argv.filter((a) => a !== '--noop');
process.argv.length = 0;
process.argv.push(...argv);
const { port, host, db, secret } = serverArgs();
const app = express();
let receiver: Receiver | undefined;
if (noop) {
  app.post('/webhooks', express.raw({ type: '*/*', limit: '1mb' }), (_req, res) => res.status(200).json({ received: true }));
} else {
  const { createReceiver } = await distModule();
  if (!db) throw new Error('--db is required');
  receiver = createReceiver({ database: db, secret });
  app.post('/webhooks', receiver.middleware());
}
app.get('/ping', (_req, res) => res.json({ pong: true }));
const server = app.listen(port, host, () => announce(server));
stopOn(server, async () => {
  await receiver?.close();
});
