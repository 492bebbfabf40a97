// A receiver on a SQLite file whose reads run in its reader thread, closed with a read in flight:
// the process must exit by itself afterwards, no thread left holding it.
import { createReceiver } from '../../dist/index.js';

const receiver = createReceiver({ database: process.argv[2], secret: 's' });
await receiver.ready();
process.stdout.write(`campaigns ${(await receiver.query.listCampaigns()).length}\n`);
const inFlight = receiver.query.listCampaigns().then(
  () => 'answered',
  (error) => `${error.name} ${error.code}`,
);
await receiver.close();
process.stdout.write(`in flight: ${await inFlight}\n`);
process.stdout.write('closed\n');
