// A process whose only work is a handler that never settles, closed with a timeout: the marker
// line must be printed (the process is kept alive until close resolves) within the timeout.
import { createReceiver } from '../../dist/index.js';
import { sampleEvent, signedRequest } from '../../dist/testing/index.js';

const receiver = createReceiver({ database: ':memory:', secret: 's', logger: undefined });
let started;
const running = new Promise((resolve) => (started = resolve));
receiver.on('candidate.added', () => {
  started();
  return new Promise(() => {}); // never settles, and holds no timer of its own
});
const request = signedRequest(sampleEvent('candidate.added'), { secret: 's' });
await receiver.receive({ rawBody: request.body, headers: request.headers });
await running;
const t = performance.now();
await receiver.close(Number(process.argv[2] ?? 1000));
process.stdout.write(`closed after ${Math.round(performance.now() - t)} ms\n`);
