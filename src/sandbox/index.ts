// prequal-hooks/sandbox: the service itself, running locally, sending real webhooks.
export { createSandbox, type Sandbox, type SandboxOptions } from './sandbox.js';
export type { Clock } from './clock.js';
export type { DeliveryAttempt } from './delivery.js';
export type { ServiceEventKind } from '../events/index.js';
export type { SubscriptionType } from '../api/index.js';
