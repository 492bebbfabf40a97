// Each documented rule, broken alone: the client throws the code the service answers, and sends
// nothing. The same request sent as is to the sandbox shows that the codes agree.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, PrequalApiError, type Client } from '../../src/client/index.js';
import { createSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { apiClient, JOB, KEY_A, person, type ApiCall } from '../support/sandbox-api.js';

// The sandbox's clock jumps a minute before each raw request, so its rate limit stays out of the way.
let now = Date.parse('2026-03-10T09:00:00.000Z');
const clock = { now: () => now };

let sandbox: Sandbox;
let raw: ApiCall;
let client: Client;
let requests = 0;
let campaignId: string;

const clientWith = (apiKey: string) =>
  createClient({
    apiKey,
    baseUrl: sandbox.url,
    fetch: (input, init) => {
      requests++;
      return fetch(input, init);
    },
  });

beforeAll(async () => {
  sandbox = await createSandbox({ apiKeys: [KEY_A], seed: 'client-rules', interviewMs: 600_000, clock, log: () => {} });
  raw = apiClient(sandbox.apiUrl, KEY_A);
  client = clientWith(KEY_A);
  campaignId = (await raw('POST', '/campaigns/create', JOB)).body.campaign_id;
});
afterAll(() => sandbox.close());

/** The client refuses with `code`, no request made; the sandbox answers the same code to the same request. */
async function expectRefused(call: (c: Client) => Promise<unknown>, code: string, sendAsIs?: [string, string, unknown?]) {
  const before = requests;
  const error = await call(client).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(PrequalApiError);
  expect({ code: (error as PrequalApiError).code, local: (error as PrequalApiError).local }).toEqual({ code, local: true });
  expect(requests - before).toBe(0);
  if (sendAsIs) {
    now += 61_000;
    const answer = await raw(...sendAsIs);
    // The service refuses a bad candidate in `errors` and keeps the others; the client refuses the request.
    const served = answer.status === 201 ? answer.body.errors[0]?.code : answer.body.error?.code;
    expect(served).toBe(code);
    if (answer.status !== 201) expect((error as PrequalApiError).status).toBe(answer.status);
  }
  return error as PrequalApiError;
}

const questions = (n: number) => Array.from({ length: n }, (_, i) => `Question ${i + 1} ?`);
const weights = (n: number) => Array.from({ length: n }, () => 1 as const);
const long = 'x'.repeat(351);

describe('create a campaign: rules 1 to 7, 9 and 10', () => {
  const rows: Array<[string, Record<string, unknown>, string]> = [
    ['more than 10 questions', { ...JOB, questions: questions(11), question_weights: weights(11) }, 'TOO_MANY_QUESTIONS'],
    ['questions without weights', { ...JOB, questions: questions(2) }, 'MISSING_QUESTION_WEIGHTS'],
    ['weights of another length', { ...JOB, questions: questions(2), question_weights: weights(3) }, 'WEIGHTS_MISMATCH'],
    ['a weight outside 0, 0.5, 1, 1.5, 2', { ...JOB, questions: questions(2), question_weights: [1, 0.7] }, 'INVALID_WEIGHT_VALUE'],
    [
      'binary evaluations of another length',
      { ...JOB, questions: questions(2), question_weights: weights(2), question_binary_evaluations: [true] },
      'BINARY_EVALUATIONS_MISMATCH',
    ],
    ['threshold 7.5', { ...JOB, automatic_selection_threshold: 7.5 }, 'INVALID_AUTOMATIC_SELECTION_THRESHOLD'],
    ['engage message of 351 characters', { ...JOB, enable_engage: true, engage_message: long }, 'MESSAGE_TOO_LONG'],
    ['job recap message of 351 characters', { ...JOB, recap_job_message: long }, 'MESSAGE_TOO_LONG'],
    ['close message of 351 characters', { ...JOB, close_message: long }, 'MESSAGE_TOO_LONG'],
    [
      'custom language question without a test mode',
      { ...JOB, custom_language_question: 'Do you speak English?' },
      'CUSTOM_LANGUAGE_QUESTION_REQUIRES_TEST_MODE',
    ],
    ['no job description', { job_title: 'Cariste', contract_type: 'CDD' }, 'MISSING_REQUIRED_FIELDS'],
    ['contract type CDI-C', { ...JOB, contract_type: 'CDI-C' }, 'INVALID_CONTRACT_TYPE'],
    ['language de', { ...JOB, language: 'de' }, 'INVALID_LANGUAGE'],
    ['salary question as a boolean', { ...JOB, enable_salary_question: true }, 'VALIDATION_ERROR'],
    ['is_voice_clone sent', { ...JOB, is_voice_clone: true }, 'VALIDATION_ERROR'],
  ];
  it.each(rows)('%s', async (_, body, code) => {
    await expectRefused((c) => c.createCampaign(body as never), code, ['POST', '/campaigns/create', body]);
  });

  it('the details say which rule and field', async () => {
    const error = await expectRefused((c) => c.createCampaign({ job_title: 'Cariste' } as never), 'MISSING_REQUIRED_FIELDS');
    expect(error).toMatchObject({
      status: 400,
      details: { missing_fields: ['contract_type', 'job_description'] },
      attempts: 0,
      request: { endpoint: 'createCampaign', method: 'POST' },
    });
  });
});

describe('modify a campaign', () => {
  const rows: Array<[string, Record<string, unknown>, string]> = [
    ['more than 10 questions', { questions: questions(11), question_weights: weights(11) }, 'TOO_MANY_QUESTIONS'],
    ['questions without weights', { questions: questions(3) }, 'MISSING_QUESTION_WEIGHTS'],
    ['a weight of 3', { questions: questions(1), question_weights: [3] }, 'INVALID_WEIGHT_VALUE'],
    ['close message of 351 characters', { close_message: long }, 'MESSAGE_TOO_LONG'],
    ['threshold 11', { automatic_selection_threshold: 11 }, 'INVALID_AUTOMATIC_SELECTION_THRESHOLD'],
    ['status in the body', { status: 'paused' }, 'VALIDATION_ERROR'],
  ];
  it.each(rows)('%s', async (_, body, code) => {
    await expectRefused((c) => c.modifyCampaign(campaignId, body), code, ['PATCH', `/campaigns/${campaignId}`, body]);
  });

  it('a status outside active, paused, completed', async () => {
    await expectRefused((c) => c.changeCampaignStatus(campaignId, 'archived' as never), 'VALIDATION_ERROR', [
      'PATCH',
      `/campaigns/${campaignId}/status`,
      { status: 'archived' },
    ]);
  });
});

describe('add and source candidates: 1 to 100, phone forms, contacts', () => {
  const add = (body: unknown) => ['POST', `/campaigns/${campaignId}/candidates`, body] as [string, string, unknown];
  it('101 candidates', async () => {
    const body = { candidates: Array.from({ length: 101 }, (_, i) => person(i)) };
    await expectRefused((c) => c.addCandidates(campaignId, body), 'TOO_MANY_CANDIDATES', add(body));
  });
  it('no candidate', async () => {
    await expectRefused((c) => c.addCandidates(campaignId, { candidates: [] }), 'VALIDATION_ERROR', add({ candidates: [] }));
  });
  it('101 candidates to source', async () => {
    const body = { candidates: Array.from({ length: 101 }, (_, i) => person(i)) };
    await expectRefused((c) => c.sourceCandidates(campaignId, body), 'TOO_MANY_CANDIDATES', [
      'POST',
      `/campaigns/${campaignId}/source`,
      body,
    ]);
  });

  const phones: Array<[string, string]> = [
    ['a landline (01)', '0123456789'],
    ['dashes between pairs', '06-12-34-56-78'],
    ['nine digits', '071122334'],
    ['+33 with a landline', '+33123456789'],
    ['+33 then a 0', '+330612345678'],
  ];
  it.each(phones)('phone: %s', async (_, phone) => {
    const body = { candidates: [person(500, { phone_number: phone })] };
    const error = await expectRefused((c) => c.addCandidates(campaignId, body), 'INVALID_PHONE_NUMBER', add(body));
    expect(error.details).toMatchObject({ index: 0 });
    // The number itself is not repeated in the error: it is candidate PII.
    expect(JSON.stringify(error.details) + error.message).not.toContain(phone);
  });

  it('the second candidate is bad: its index is given', async () => {
    const body = { candidates: [person(501), person(502, { phone_number: '0123456789' })] };
    const error = await expectRefused((c) => c.addCandidates(campaignId, body), 'INVALID_PHONE_NUMBER');
    expect(error.details).toMatchObject({ index: 1 });
  });

  it('call mode without an e-mail', async () => {
    const body = { candidates: [person(503, { email: undefined })] };
    await expectRefused((c) => c.addCandidates(campaignId, body), 'VALIDATION_ERROR', add(body));
  });

  it('the three documented phone forms are sent', async () => {
    const before = requests;
    const body = {
      candidates: [
        person(510, { phone_number: '0612345610' }),
        person(511, { phone_number: '06 12 34 56 11' }),
        person(512, { phone_number: '+33712345612' }),
      ],
    };
    expect(await client.addCandidates(campaignId, body)).toMatchObject({ candidates_added: 3, errors: [] });
    expect(requests - before).toBe(1);
  });
});

describe('the candidate list query', () => {
  const rows: Array<[string, Record<string, unknown>]> = [
    ['per_page 0', { per_page: 0 }],
    ['per_page 101', { per_page: 101 }],
    ['page 0', { page: 0 }],
    ['sort by name', { sort: 'name_asc' }],
    ['status failed', { status: 'failed' }],
    ['min_score 11', { min_score: 11 }],
  ];
  it.each(rows)('%s', async (_, query) => {
    const search = new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)]));
    await expectRefused((c) => c.listCandidates(campaignId, query), 'VALIDATION_ERROR', [
      'GET',
      `/campaigns/${campaignId}/candidates?${search.toString()}`,
    ]);
  });

  it('the page walker checks the query before its first request', async () => {
    await expectRefused(async (c) => {
      for await (const _ of c.eachCandidate(campaignId, { per_page: 500 })) void _;
    }, 'VALIDATION_ERROR');
  });
});

describe('the API key and the path', () => {
  it('no key: MISSING_API_KEY', async () => {
    const before = requests;
    await expect(clientWith('').getCredits()).rejects.toMatchObject({
      code: 'MISSING_API_KEY',
      status: 401,
      local: true,
      details: { header: 'X-API-Key' },
    });
    expect(requests).toBe(before);
  });
  it('a key without live_: INVALID_API_KEY_FORMAT, as the service answers', async () => {
    const before = requests;
    await expect(clientWith('sk_test_abcdef').getCredits()).rejects.toMatchObject({
      code: 'INVALID_API_KEY_FORMAT',
      status: 401,
      local: true,
    });
    expect(requests).toBe(before);
    now += 61_000;
    expect((await apiClient(sandbox.apiUrl, 'sk_test_abcdef')('GET', '/account/credits')).body.error.code).toBe('INVALID_API_KEY_FORMAT');
  });
  it('an empty campaign id', async () => {
    await expectRefused((c) => c.getCampaignStatus(''), 'VALIDATION_ERROR');
  });
});
