// serve's delivery of every account's destinations (docs/destinations.md): started once the
// receiver listens, stopped on SIGTERM before the receiver closes, waiting for the deliveries in
// flight a bounded time (those cut short stay queued and are sent again).
import { startDeliveryLoop, type DeliveryLoop } from '../destinations/delivery-loop.js';
import { openDestinations } from '../destinations/registry.js';
import type { Logger } from '../logging.js';
import type { Receiver } from '../receiver/api.js';
import { destinationDeliveriesOf } from '../metrics/prometheus.js';
import { isPostgresUrl } from '../store/open.js';
import type { Store } from '../store/store.js';
import type { ServeConfig } from './serve-options.js';

/** `receiver`: where each settled delivery is counted (its metrics), and whose intake a round yields to. */
export function startDestinations(
  config: ServeConfig,
  database: Store,
  logger: Logger,
  receiver: Pick<Receiver, 'metrics' | 'intakeBusy'>,
): DeliveryLoop {
  const destinations = openDestinations(database, {
    ...(config.accountsKeyFile !== undefined && { keyFile: config.accountsKeyFile }),
    ...(!isPostgresUrl(config.database) && { databaseFile: config.database }),
    onNotice: (message) => logger.warn(message),
  });
  return startDeliveryLoop({
    store: database,
    destinations,
    logger,
    intakeBusy: receiver.intakeBusy,
    network: config.destinationsNetwork,
    onSettled: destinationDeliveriesOf(receiver.metrics()),
  });
}
