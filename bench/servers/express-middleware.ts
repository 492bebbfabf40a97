// (2) prequal-hooks as Express middleware, durable with its defaults (WAL, synchronous = FULL,
// group commit), on a fresh database given by --db.
import express from 'express';
import { distModule } from '../lib/paths.js';
import { announce, serverArgs, stopOn } from './common.js';

const { createReceiver } = await distModule();

const { port, host, db, secret } = serverArgs();
if (!db) throw new Error('--db is required');
const receiver = createReceiver({ database: db, secret });
const app = express();
app.post('/webhooks', receiver.middleware());
const server = app.listen(port, host, () => announce(server));
stopOn(server, () => receiver.close());
