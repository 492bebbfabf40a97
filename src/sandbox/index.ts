// prequal-hooks/sandbox: the service itself, running locally, sending real webhooks.
export { createSandbox, type Sandbox, type SandboxOptions } from './sandbox.js';
