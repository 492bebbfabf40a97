// `serve` starts the OpenTelemetry Node SDK when the standard OTEL_* variables ask for traces,
// and loads nothing otherwise. The SDK reads the variables itself (exporter, endpoint, protocol
// http/json or http/protobuf, service name); only traces are set up, not metrics or logs.
import { createRequire } from 'node:module';
import type { CommandIo } from './args.js';
import { otelApi, type Context } from '../tracing/otel.js';

export interface TracingSdk {
  /** Exports the spans still buffered, then stops. */
  shutdown(): Promise<void>;
}

const set = (value: string | undefined) => value !== undefined && value.trim() !== '';

/** Whether the environment asks for traces: an OTLP endpoint, or a traces exporter other than "none". */
export function tracesAsked(env: NodeJS.ProcessEnv): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  const exporters = env.OTEL_TRACES_EXPORTER;
  if (set(exporters)) return exporters!.split(',').some((name) => name.trim() !== 'none' && name.trim() !== '');
  return set(env.OTEL_EXPORTER_OTLP_ENDPOINT) || set(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}

/**
 * The SDK started, before the receiver and its logger are created (they decide once whether to
 * trace); undefined when the environment does not ask, or when the SDK is not installed (one line
 * says so and `serve` runs without traces).
 */
export async function startTracing(env: NodeJS.ProcessEnv, io: CommandIo): Promise<TracingSdk | undefined> {
  if (!tracesAsked(env)) return undefined;
  let sdkModule: typeof import('@opentelemetry/sdk-node');
  try {
    sdkModule = await import('@opentelemetry/sdk-node');
  } catch {
    io.stderr.write(
      'prequal-hooks serve: the OTEL_* variables ask for traces, but @opentelemetry/sdk-node is not installed; running without traces ' +
        '(npm install @opentelemetry/api @opentelemetry/sdk-node beside prequal-hooks).\n',
    );
    return undefined;
  }
  const api = otelApi();
  // No instrumentations: prequal-hooks makes its own spans. No metrics (Prometheus has them) nor logs (stdout has them).
  const sdk = new sdkModule.NodeSDK({
    instrumentations: [],
    metricReaders: [],
    logRecordProcessors: [],
    resourceDetectors: resourceDetectors(),
    ...(api !== null && { contextManager: synchronousContextManager(api.ROOT_CONTEXT) as never }),
  });
  sdk.start();
  return { shutdown: () => sdk.shutdown() };
}

type SdkOptions = NonNullable<ConstructorParameters<typeof import('@opentelemetry/sdk-node').NodeSDK>[0]>;
/** A resource detector as the installed SDK types it: its attributes' type differs between SDK lines (0.2xx, 0.3xx). */
type Detector = NonNullable<SdkOptions['resourceDetectors']>[number];

/**
 * The SDK's default resource detectors, but the process detector without the command line:
 * `process.command_args` would export `--secret` and `--dashboard-token` given as flags.
 * @opentelemetry/resources is loaded from where the SDK finds it (it comes with it).
 */
function resourceDetectors(): Detector[] {
  const require = createRequire(createRequire(import.meta.url).resolve('@opentelemetry/sdk-node'));
  const resources = require('@opentelemetry/resources') as Record<
    'envDetector' | 'hostDetector' | 'osDetector' | 'processDetector' | 'serviceInstanceIdDetector',
    Detector
  >;
  const withoutArguments: Detector = {
    detect(config) {
      const detected = resources.processDetector.detect(config);
      const { 'process.command_args': _arguments, ...attributes } = detected.attributes ?? {};
      return { ...detected, attributes };
    },
  };
  return [resources.envDetector, resources.hostDetector, resources.osDetector, withoutArguments, resources.serviceInstanceIdDetector];
}

/**
 * A context manager that keeps a context for the synchronous extent of `with` only. `serve` runs
 * no application code and passes its spans along explicitly, so it needs no more; the SDK's
 * default (AsyncLocalStorage) cost a quarter of ingest on Node 20 (bench/tracing.js).
 */
function synchronousContextManager(root: Context) {
  let current = root;
  const manager = {
    active: () => current,
    with<A extends unknown[], R>(context: Context, fn: (...args: A) => R, thisArg?: unknown, ...args: A): R {
      const previous = current;
      current = context;
      try {
        return fn.call(thisArg, ...args);
      } finally {
        current = previous;
      }
    },
    bind<T>(context: Context, target: T): T {
      if (typeof target !== 'function') return target;
      return ((...args: unknown[]) => manager.with(context, target as (...a: unknown[]) => unknown, undefined, ...args)) as T;
    },
    enable: () => manager,
    disable: () => ((current = root), manager),
  };
  return manager;
}
