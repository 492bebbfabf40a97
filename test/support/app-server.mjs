// The part every test app shares: its receiver served on a free loopback port, announced as serve
// announces it (so that startScript finds it), and stopped cleanly on SIGTERM.
import { createServer } from 'node:http';

export async function serveApp(receiver, cleanup = async () => {}) {
  await receiver.ready();
  const server = createServer(receiver.nodeHandler());
  server.listen(0, '127.0.0.1', () => {
    process.stderr.write(`test app: receiving webhooks on POST http://127.0.0.1:${server.address().port}/webhooks\n`);
  });
  process.once('SIGTERM', async () => {
    server.close();
    await receiver.close(2000);
    await cleanup();
    process.exit(0);
  });
}
