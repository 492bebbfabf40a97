// A receiver on a PostgreSQL that refuses connections, closed while its background open waits to
// retry: close() must stop that wait, so the process exits as soon as close() resolves.
import { createReceiver } from '../../dist/index.js';

const [url, waitMs] = process.argv.slice(2);
const receiver = createReceiver({ database: url, secret: 's' });
const ready = receiver.ready().then(
  () => 'open',
  (error) => error.code,
);
// eslint-disable-next-line no-restricted-syntax -- closed while the open waits to try again: that moment is the scenario
await new Promise((resolve) => setTimeout(resolve, Number(waitMs)));
const t = performance.now();
await receiver.close(1000);
process.stdout.write(`closed after ${Math.round(performance.now() - t)} ms\n`);
process.stdout.write(`ready: ${await ready}\n`);
