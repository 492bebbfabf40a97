import { describe, expect, it } from 'vitest';
import { tracesAsked } from '../../src/cli/tracing.js';
import { linkFrom } from '../../src/tracing/otel.js';

describe('which OTEL_* variables turn traces on in serve', () => {
  it.each([
    [{}, false],
    [{ OTEL_SERVICE_NAME: 'hooks' }, false],
    [{ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }, true],
    [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }, true],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: ' ' }, false],
    [{ OTEL_TRACES_EXPORTER: 'otlp' }, true],
    [{ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }, false],
    [{ OTEL_TRACES_EXPORTER: 'none,console' }, true],
    [{ OTEL_SDK_DISABLED: 'true', OTEL_TRACES_EXPORTER: 'otlp' }, false],
  ])('%o: %s', (env, on) => {
    expect(tracesAsked(env)).toBe(on);
  });
});

describe('links from a stored traceparent', () => {
  it('reads a valid traceparent, and nothing from a missing or malformed one', () => {
    expect(linkFrom('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01')).toEqual([
      { context: { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: 1, isRemote: true } },
    ]);
    for (const bad of [
      null,
      undefined,
      '',
      '00-xyz',
      '01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      '00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01',
    ]) {
      expect(linkFrom(bad)).toEqual([]);
    }
  });
});
