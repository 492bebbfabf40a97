// Retention on a schedule (`ReceiverOptions.eraseInactiveAfter`, `serve --erase-inactive-after`):
// at start and then daily, off the request path, never twice at once; one log line of counts, never
// a person's data.
import type { Logger } from '../logging.js';
import { repeatFromStart, type Repeating } from '../repeat.js';
import { count } from '../words.js';
import type { RetentionReport } from './retention.js';

/** How often retention runs once started (and once at start). */
const RETENTION_EVERY_MS = 24 * 60 * 60_000;

/** Runs `eraseInactive` (the receiver's: its metrics and onErase hooks follow) at start and daily. */
export function eraseInactiveDaily(eraseInactive: () => Promise<RetentionReport>, logger: Logger): Repeating {
  const run = () =>
    eraseInactive()
      .then((report) => {
        logger.info(
          {
            candidatesErased: report.candidatesErased,
            eventsRedacted: report.eventsRedacted,
            setAsideRedacted: report.setAsideRedacted,
            cutoff: report.cutoff,
            scrubbed: report.scrubbed,
          },
          `retention: ${count(report.candidatesErased, 'candidate')} erased`,
        );
      })
      .catch((error: unknown) => logger.error({ err: { message: (error as Error).message } }, 'retention failed; it runs again tomorrow'));
  return repeatFromStart(run, RETENTION_EVERY_MS);
}
