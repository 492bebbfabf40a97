// `serve` with the standard OTEL_* variables, exporting to a small OTLP/HTTP collector written
// here (http/json decoded; http/protobuf checked by content type and the span names in its bytes).
import { cpSync, mkdirSync, readdirSync, symlinkSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { sampleEvent, signedRequest } from '../../src/testing/index.js';
import { killChildren, runCliProcess, startScript, startServe } from '../support/cli-process.js';
import { listen, tempDir } from '../support/servers.js';
import { waitFor } from '../support/wait-for.js';

const SECRET = 'whsec_serve_tracing_8d2f4a';
const TRACE = '0af7651916cd43dd8448eb211c80319c';
const PARENT = 'b7ad6b7169203331';
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

interface Export {
  path: string;
  contentType: string;
  body: Buffer;
}

/** An OTLP/HTTP collector: keeps every export, answers 200 as a collector does. */
async function collector() {
  const exports: Export[] = [];
  const server = await listen((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      exports.push({ path: req.url ?? '', contentType: req.headers['content-type'] ?? '', body: Buffer.concat(chunks) });
      const json = (req.headers['content-type'] ?? '').includes('json');
      res.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' }).end(json ? '{}' : '');
    });
  });
  return { ...server, exports };
}

type OtlpValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean };
interface OtlpSpan {
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  attributes: Array<{ key: string; value: OtlpValue }>;
  links?: Array<{ traceId: string; spanId: string }>;
}

/** The spans and resource attributes of OTLP/JSON trace exports. */
function decodeJson(exports: readonly Export[]): { spans: OtlpSpan[]; service: string[] } {
  const requests = exports.map(
    (e) =>
      JSON.parse(e.body.toString()) as {
        resourceSpans: Array<{ resource: { attributes: OtlpSpan['attributes'] }; scopeSpans: Array<{ spans: OtlpSpan[] }> }>;
      },
  );
  const resources = requests.flatMap((r) => r.resourceSpans);
  return {
    spans: resources.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans)),
    service: resources.map((r) => r.resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue ?? ''),
  };
}

const attribute = (span: OtlpSpan, key: string) => {
  const value = span.attributes.find((a) => a.key === key)?.value;
  return value?.stringValue ?? value?.boolValue ?? (value?.intValue === undefined ? undefined : Number(value.intValue));
};

async function post(url: string, headers: Record<string, string>, body: Buffer) {
  return await fetch(url, { method: 'POST', headers, body });
}

describe('serve exports traces over OTLP/HTTP when the OTEL_* variables ask', () => {
  const tmp = tempDir();
  afterEach(() => killChildren());
  afterAll(() => tmp.cleanup());

  it('http/json: a server span continuing the traceparent, the commit, projection and handler-free processing; no personal data', async () => {
    const otlp = await collector();
    try {
      const serve = await startServe(['--port', '0', '--host', '127.0.0.1', '--db', join(tmp.dir, 'json.db'), '--secret', SECRET], {
        OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_SERVICE_NAME: 'hooks-under-test',
        OTEL_BSP_SCHEDULE_DELAY: '100',
      });
      const event = sampleEvent('candidate.interview.completed');
      const request = signedRequest(event, { secret: SECRET });
      expect((await post(serve.webhookUrl, { ...request.headers, traceparent: `00-${TRACE}-${PARENT}-01` }, request.body)).status).toBe(
        200,
      );
      const { spans } = await waitFor(
        () => {
          const decoded = decodeJson(otlp.exports.filter((e) => e.path === '/v1/traces'));
          return decoded.spans.some((s) => s.name === 'project inbox') ? decoded : undefined;
        },
        8000,
        'the projection span at the collector',
      );
      expect(await serve.stop()).toBe(0);

      const all = decodeJson(otlp.exports.filter((e) => e.path === '/v1/traces'));
      expect(otlp.exports.every((e) => e.contentType.startsWith('application/json'))).toBe(true);
      expect(new Set(all.service)).toEqual(new Set(['hooks-under-test']));
      const server = spans.find((s) => s.name === 'POST webhook')!;
      expect(server.traceId).toBe(TRACE);
      expect(server.parentSpanId).toBe(PARENT);
      expect(attribute(server, 'prequal_hooks.event.kind')).toBe('candidate.interview.completed');
      expect(attribute(server, 'prequal_hooks.outcome')).toBe('stored');
      const commit = spans.find((s) => s.name === 'inbox commit')!;
      expect(commit.parentSpanId).toBe(server.spanId);
      const projection = spans.find((s) => s.name === 'project inbox')!;
      expect(projection.links?.map((l) => [l.traceId, l.spanId])).toEqual([[TRACE, server.spanId]]);
      // Its own trace: the drain is not part of the request that woke it.
      expect(projection.parentSpanId ?? '').toBe('');
      expect(projection.traceId).not.toBe(TRACE);
      // The access log line names the request's span.
      expect(serve.logLines().find((line) => line.msg === 'webhook')).toMatchObject({ trace_id: TRACE, span_id: server.spanId });
      const exported = otlp.exports.map((e) => e.body.toString()).join('\n');
      for (const personal of [event.data.first_name, event.data.last_name, event.data.email, event.data.phone, SECRET])
        expect(exported).not.toContain(personal);
    } finally {
      await otlp.close();
    }
  });

  it('http/protobuf: protobuf exports to /v1/traces, flushed at SIGTERM', async () => {
    const otlp = await collector();
    try {
      const serve = await startServe(['--port', '0', '--host', '127.0.0.1', '--db', join(tmp.dir, 'proto.db'), '--secret', SECRET], {
        OTEL_TRACES_EXPORTER: 'otlp',
        OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
        OTEL_SERVICE_NAME: 'hooks-protobuf',
      });
      const request = signedRequest(sampleEvent('credits.low'), { secret: SECRET });
      expect((await post(serve.webhookUrl, request.headers, request.body)).status).toBe(200);
      // The batch delay (5 s by default) has not passed: the stop exports what is buffered.
      expect(await serve.stop()).toBe(0);
      const traces = otlp.exports.filter((e) => e.path === '/v1/traces');
      expect(traces.length).toBeGreaterThan(0);
      expect(traces.every((e) => e.contentType === 'application/x-protobuf' && e.body.length > 0)).toBe(true);
      const bytes = Buffer.concat(traces.map((e) => e.body)).toString('latin1');
      for (const text of ['POST webhook', 'inbox commit', 'hooks-protobuf', 'credits.low']) expect(bytes).toContain(text);
      expect(otlp.exports.filter((e) => e.path !== '/v1/traces')).toEqual([]);
    } finally {
      await otlp.close();
    }
  });

  it('without OTEL_* variables nothing is exported and no line about tracing is said', async () => {
    const serve = await startServe(['--port', '0', '--host', '127.0.0.1', '--db', join(tmp.dir, 'off.db'), '--secret', SECRET]);
    const request = signedRequest(sampleEvent('credits.low'), { secret: SECRET });
    expect((await post(serve.webhookUrl, request.headers, request.body)).status).toBe(200);
    expect(await serve.stop()).toBe(0);
    expect(serve.stderr()).not.toMatch(/opentelemetry|trac/i);
    expect(serve.logLines().some((line) => 'trace_id' in line)).toBe(false);
  });

  it('asked for traces without the SDK installed: one line, and serve runs', async () => {
    // A copy of the package whose node_modules lacks @opentelemetry (the others linked).
    const install = join(tmp.dir, 'no-otel');
    mkdirSync(join(install, 'node_modules'), { recursive: true });
    for (const part of ['dist', 'migrations', 'package.json']) cpSync(join(ROOT, part), join(install, part), { recursive: true });
    for (const name of readdirSync(join(ROOT, 'node_modules'))) {
      if (name !== '@opentelemetry' && name !== '.bin') symlinkSync(join(ROOT, 'node_modules', name), join(install, 'node_modules', name));
    }
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9/' };
    const serve = await startScript(
      join(install, 'dist/cli/main.js'),
      ['serve', '--port', '0', '--host', '127.0.0.1', '--db', join(tmp.dir, 'no-otel.db'), '--secret', SECRET],
      env,
    );
    const request = signedRequest(sampleEvent('credits.low'), { secret: SECRET });
    expect((await post(serve.webhookUrl, request.headers, request.body)).status).toBe(200);
    expect(await serve.stop()).toBe(0);
    const said = serve
      .stderr()
      .split('\n')
      .filter((line) => line.includes('@opentelemetry/sdk-node is not installed'));
    expect(said).toHaveLength(1);
    expect((await runCliProcess(['serve', '--help'])).code).toBe(0);
  });
});
