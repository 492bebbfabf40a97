// What delivering logs to: the receiver's pino logger in its thread; from the delivery thread, the
// lines are sent to the receiver's thread and logged there (delivery-thread.ts).
import type { Logger } from '../logging.js';

export type DeliveryLogger = Pick<Logger, 'info' | 'warn' | 'error'>;
