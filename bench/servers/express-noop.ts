// (1) The Express ceiling: an Express 5 route that reads the raw body (express.raw) and answers 200.
import express from 'express';
import { announce, serverArgs, stopOn } from './common.js';

const { port, host } = serverArgs();
const app = express();
app.post('/webhooks', express.raw({ type: '*/*', limit: '1mb' }), (_req, res) => {
  res.status(200).json({ received: true });
});
const server = app.listen(port, host, () => announce(server));
stopOn(server);
