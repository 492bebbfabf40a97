// (4) The peer library: @octokit/webhooks createNodeMiddleware on node:http, a no-op handler.
// GitHub signs as the service does (X-Hub-Signature-256: sha256=<HMAC of the raw body>); it
// verifies, parses the JSON and calls the handler; it stores nothing.
import { createServer } from 'node:http';
import { Webhooks, createNodeMiddleware } from '@octokit/webhooks';
import { announce, serverArgs, stopOn } from './common.js';

const { port, host, secret } = serverArgs();
const webhooks = new Webhooks({ secret });
webhooks.onAny(() => {});
const middleware = createNodeMiddleware(webhooks, { path: '/webhooks' });
// The middleware answers every request itself, its failures included: nothing to wait for here.
const server = createServer((req, res) => void middleware(req, res));
server.listen(port, host, () => announce(server));
stopOn(server);
