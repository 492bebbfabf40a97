// Every documented error rule of the service, each alone, against the in-process sandbox over
// real HTTP: its status, its code, and the details the document names.
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODES, errorBodySchema } from '../../src/api/index.js';
import { createSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { apiClient, JOB, KEY_A, KEY_B, KEY_OFF, person, type ApiCall } from '../support/sandbox-api.js';

// A clock the tests move: each request below starts a fresh minute, so the rate limit stays out of the way.
let now = Date.parse('2026-03-10T09:00:00.000Z');
const clock = { now: () => now };

let sandbox: Sandbox;
let asA: ApiCall;
let asB: ApiCall;
let campaignId: string;
let campaignOfB: string;

beforeAll(async () => {
  sandbox = await createSandbox({
    apiKeys: [KEY_A, KEY_B],
    inactiveApiKeys: [KEY_OFF],
    seed: 'rules',
    interviewMs: 600_000,
    clock,
    log: () => {},
  });
  asA = apiClient(sandbox.apiUrl, KEY_A);
  asB = apiClient(sandbox.apiUrl, KEY_B);
  campaignId = (await asA('POST', '/campaigns/create', JOB)).body.campaign_id;
  campaignOfB = (await asB('POST', '/campaigns/create', JOB)).body.campaign_id;
});
afterAll(() => sandbox.close());

/** Sends a request as `key` and checks the answer is the documented error in the envelope. */
async function expectError(call: ApiCall, method: string, path: string, body: unknown, status: number, code: string) {
  now += 61_000;
  const answer = await call(method, path, body);
  expect({ status: answer.status, code: answer.body?.error?.code }).toEqual({ status, code });
  expect(errorBodySchema.safeParse(answer.body).success).toBe(true);
  expect(ERROR_CODES[code as keyof typeof ERROR_CODES].status).toBe(status);
  return answer.body.error as { code: string; message: string; details?: Record<string, any> };
}

const questions = (n: number) => Array.from({ length: n }, (_, i) => `Question ${i + 1} ?`);
const weights = (n: number) => Array.from({ length: n }, () => 1);

describe('POST /campaigns/create: rules 1 to 11, each alone', () => {
  const rows: Array<[string, Record<string, unknown>, number, string, Record<string, unknown>?]> = [
    ['1. more than 10 questions', { questions: questions(11), question_weights: weights(11) }, 400, 'TOO_MANY_QUESTIONS'],
    ['2. questions without weights', { questions: questions(2) }, 400, 'MISSING_QUESTION_WEIGHTS'],
    [
      '3. weights of another length',
      { questions: questions(2), question_weights: weights(3) },
      400,
      'WEIGHTS_MISMATCH',
      { questions: 2, question_weights: 3 },
    ],
    ['3. weights for the 6 generated questions, of another length', { question_weights: weights(5) }, 400, 'WEIGHTS_MISMATCH'],
    ['4. a weight outside 0, 0.5, 1, 1.5, 2', { questions: questions(2), question_weights: [1, 0.7] }, 400, 'INVALID_WEIGHT_VALUE'],
    ['4. a weight given as text', { questions: questions(1), question_weights: ['1'] }, 400, 'INVALID_WEIGHT_VALUE'],
    [
      '5. binary evaluations of another length',
      { questions: questions(2), question_weights: weights(2), question_binary_evaluations: [true] },
      400,
      'BINARY_EVALUATIONS_MISMATCH',
    ],
    ['6. threshold 7.5', { automatic_selection_threshold: 7.5 }, 400, 'INVALID_AUTOMATIC_SELECTION_THRESHOLD'],
    ['6. threshold 8.2', { automatic_selection_threshold: 8.2 }, 400, 'INVALID_AUTOMATIC_SELECTION_THRESHOLD'],
    ['6. threshold as text', { automatic_selection_threshold: '9.0' }, 400, 'INVALID_AUTOMATIC_SELECTION_THRESHOLD'],
    [
      '7. engage message of 351 characters',
      { enable_engage: true, engage_message: 'é'.repeat(351) },
      400,
      'MESSAGE_TOO_LONG',
      { field: 'engage_message' },
    ],
    [
      '7. job recap message of 351 characters',
      { recap_job_message: 'x'.repeat(351) },
      400,
      'MESSAGE_TOO_LONG',
      { field: 'recap_job_message' },
    ],
    ['7. close message of 351 characters', { close_message: 'x'.repeat(351) }, 400, 'MESSAGE_TOO_LONG', { field: 'close_message' }],
    ['8. an unknown voice', { override_agent_id: 'agent_fr_nobody' }, 400, 'INVALID_OVERRIDE_AGENT_ID'],
    ["8. another agency's voice clone", { override_agent_id: 'vc_agency_2_1' }, 400, 'INVALID_OVERRIDE_AGENT_ID'],
    ['8. a voice clone still training', { override_agent_id: 'vc_agency_1_2' }, 400, 'INVALID_OVERRIDE_AGENT_ID'],
    [
      '9. custom language question without a test mode',
      { custom_language_question: 'Can you describe your last job?' },
      400,
      'CUSTOM_LANGUAGE_QUESTION_REQUIRES_TEST_MODE',
    ],
    [
      '9. custom language question with test mode none',
      { language_test_mode: 'none', custom_language_question: 'Q?' },
      400,
      'CUSTOM_LANGUAGE_QUESTION_REQUIRES_TEST_MODE',
    ],
    ['10. an invalid contract type', { contract_type: 'CDI temps partiel' }, 400, 'INVALID_CONTRACT_TYPE'],
    ['10. an unsupported language', { language: 'de' }, 400, 'INVALID_LANGUAGE'],
    ['is_voice_clone sent by the client', { is_voice_clone: true }, 400, 'VALIDATION_ERROR', { is_voice_clone: expect.any(String) }],
    [
      'enable_salary_question sent as a boolean',
      { enable_salary_question: true },
      400,
      'VALIDATION_ERROR',
      { enable_salary_question: expect.any(String) },
    ],
  ];
  it.each(rows.map(([name, change, status, code, details]) => ({ name, change, status, code, details })))(
    '$name: $status $code',
    async ({ change, status, code, details }) => {
      const error = await expectError(asA, 'POST', '/campaigns/create', { ...JOB, ...change }, status, code);
      if (details) expect(error.details).toMatchObject(details);
    },
  );

  it.each(['job_title', 'contract_type', 'job_description'])('10. missing %s: 400 MISSING_REQUIRED_FIELDS listing it', async (field) => {
    const body: Record<string, unknown> = { ...JOB };
    delete body[field];
    const error = await expectError(asA, 'POST', '/campaigns/create', body, 400, 'MISSING_REQUIRED_FIELDS');
    expect(error.details).toEqual({ missing_fields: [field] });
    const blank = await expectError(asA, 'POST', '/campaigns/create', { ...JOB, [field]: '  ' }, 400, 'MISSING_REQUIRED_FIELDS');
    expect(blank.details).toEqual({ missing_fields: [field] });
  });

  it('10. details: valid_types for the contract type, missing_fields for all three; an empty or non-JSON body is refused', async () => {
    const contract = await expectError(
      asA,
      'POST',
      '/campaigns/create',
      { ...JOB, contract_type: 'Interim' },
      400,
      'INVALID_CONTRACT_TYPE',
    );
    expect(contract.details!.valid_types).toEqual([
      'CDI',
      'CDD',
      'Stage',
      'Intérim',
      "Contrat d'apprentissage",
      'Contrat de professionnalisation',
      'Freelance',
    ]);
    const empty = await expectError(asA, 'POST', '/campaigns/create', {}, 400, 'MISSING_REQUIRED_FIELDS');
    expect(empty.details).toEqual({ missing_fields: ['job_title', 'contract_type', 'job_description'] });
    const notJson = await expectError(asA, 'POST', '/campaigns/create', '{"job_title": ', 400, 'VALIDATION_ERROR');
    expect(notJson.details!.body).toMatch(/not valid JSON/);
    await expectError(asA, 'POST', '/campaigns/create', [JOB], 400, 'VALIDATION_ERROR');
  });

  it('accepts the boundaries: 10 questions, 350-character messages, each threshold and null, a test mode with its question, its own clone', async () => {
    for (const change of [
      {
        questions: questions(10),
        question_weights: [0, 0.5, 1, 1.5, 2, 2, 1.5, 1, 0.5, 0],
        question_binary_evaluations: Array(10).fill(false),
      },
      { engage_message: 'x'.repeat(350), recap_job_message: 'é'.repeat(350), close_message: '' },
      ...[8, 8.5, 9, 9.5, 10, null].map((t) => ({ automatic_selection_threshold: t })),
      { language_test_mode: 'english', custom_language_question: 'Describe your last job.' },
      { override_agent_id: 'vc_agency_1_1', language: 'es', contract_type: 'Intérim', enable_salary_question: 'Horaires' },
    ]) {
      now += 61_000;
      const answer = await asA('POST', '/campaigns/create', { ...JOB, ...change });
      expect(answer.status).toBe(201);
    }
  });

  it('201 with the documented body; questions are generated (6, "ai") or supplied ("default")', async () => {
    now += 61_000;
    const generated = await asA('POST', '/campaigns/create', JOB);
    expect(generated.status).toBe(201);
    expect(generated.body).toEqual({
      campaign_id: expect.stringMatching(/^cmp_/),
      candidate_link: expect.stringMatching(/^https:\/\//),
      status: 'active',
      questions_generated: 6,
      questions_source: 'ai',
    });
    const record = await asA('GET', `/campaigns/${generated.body.campaign_id}`);
    expect(record.body.questions).toHaveLength(6);
    expect(record.body.questions.join(' ')).toContain('Cariste CACES 3');
    now += 61_000;
    const supplied = await asA('POST', '/campaigns/create', { ...JOB, questions: questions(3), question_weights: weights(3) });
    expect(supplied.body).toMatchObject({ questions_generated: 3, questions_source: 'default' });
  });
});

describe('PATCH /campaigns/{id}: the modify rules', () => {
  const rows: Array<[string, Record<string, unknown>, number, string]> = [
    ['an invalid contract type', { contract_type: 'Mission' }, 400, 'INVALID_CONTRACT_TYPE'],
    ['an unsupported language', { language: 'it' }, 400, 'INVALID_LANGUAGE'],
    ['an unknown voice', { override_agent_id: 'agent_xx' }, 400, 'INVALID_OVERRIDE_AGENT_ID'],
    ['questions and weights of other lengths', { questions: questions(2), question_weights: weights(1) }, 400, 'WEIGHTS_MISMATCH'],
    ['weights alone, not as many as the 6 questions', { question_weights: weights(4) }, 400, 'WEIGHTS_MISMATCH'],
    [
      'binary evaluations alone, not as many as the 6 questions',
      { question_binary_evaluations: [true] },
      400,
      'BINARY_EVALUATIONS_MISMATCH',
    ],
    ['a close message of 351 characters', { close_message: 'x'.repeat(351) }, 400, 'MESSAGE_TOO_LONG'],
    ['questions without weights', { questions: questions(3) }, 400, 'MISSING_QUESTION_WEIGHTS'],
    ['11 questions', { questions: questions(11), question_weights: weights(11) }, 400, 'TOO_MANY_QUESTIONS'],
    ['a weight of 3', { questions: questions(1), question_weights: [3] }, 400, 'INVALID_WEIGHT_VALUE'],
    ['threshold 11', { automatic_selection_threshold: 11 }, 400, 'INVALID_AUTOMATIC_SELECTION_THRESHOLD'],
    [
      'a custom language question while the mode is none',
      { custom_language_question: 'Q?' },
      400,
      'CUSTOM_LANGUAGE_QUESTION_REQUIRES_TEST_MODE',
    ],
    ['is_voice_clone', { is_voice_clone: false }, 400, 'VALIDATION_ERROR'],
    ['the status (it has its own operation)', { status: 'paused' }, 400, 'VALIDATION_ERROR'],
    ['an empty job title', { job_title: '' }, 400, 'VALIDATION_ERROR'],
  ];
  it.each(rows.map(([name, change, status, code]) => ({ name, change, status, code })))(
    '$name: $status $code',
    async ({ change, status, code }) => {
      await expectError(asA, 'PATCH', `/campaigns/${campaignId}`, change, status, code);
    },
  );

  it("404 CAMPAIGN_NOT_FOUND for a missing campaign and for another agency's", async () => {
    await expectError(asA, 'PATCH', '/campaigns/cmp_missing', { job_title: 'x' }, 404, 'CAMPAIGN_NOT_FOUND');
    await expectError(asA, 'PATCH', `/campaigns/${campaignOfB}`, { job_title: 'x' }, 404, 'CAMPAIGN_NOT_FOUND');
  });

  it('changes only what is supplied; null resets the voice, an empty engage message removes it, mode none clears the custom question', async () => {
    now += 61_000;
    const created = await asA('POST', '/campaigns/create', {
      ...JOB,
      language: 'en',
      override_agent_id: 'vc_agency_1_1',
      engage_message: 'Hello!',
      language_test_mode: 'english',
      custom_language_question: 'Tell us about your week.',
    });
    const id = created.body.campaign_id;
    now += 61_000;
    const changed = await asA('PATCH', `/campaigns/${id}`, {
      job_title: 'Cariste de nuit',
      override_agent_id: null,
      engage_message: '',
      language_test_mode: 'none',
    });
    expect(changed.status).toBe(200);
    expect(changed.body).toEqual({ campaign_id: id, updated_at: new Date(now).toISOString() });
    const record = (await asA('GET', `/campaigns/${id}`)).body;
    expect(record).toMatchObject({
      job_title: 'Cariste de nuit',
      job_description: JOB.job_description,
      override_agent_id: 'agent_en_emma',
      is_voice_clone: false,
      engage_message: null,
      language_test_mode: 'none',
      custom_language_question: null,
    });
    now += 61_000;
    await asA('PATCH', `/campaigns/${id}`, { questions: questions(2), question_weights: [2, 0.5] });
    expect((await asA('GET', `/campaigns/${id}`)).body).toMatchObject({
      questions: questions(2),
      question_weights: [2, 0.5],
      questions_source: 'default',
    });
    // Now the campaign has 2 questions: lone weights are compared with 2.
    await expectError(asA, 'PATCH', `/campaigns/${id}`, { question_weights: weights(6) }, 400, 'WEIGHTS_MISMATCH');
  });
});

describe('PATCH /campaigns/{id}/status and GET …/status', () => {
  it('moves among active, paused, completed; refuses other values and leaving completed', async () => {
    now += 61_000;
    const id = (await asA('POST', '/campaigns/create', JOB)).body.campaign_id;
    await expectError(asA, 'PATCH', `/campaigns/${id}/status`, { status: 'archived' }, 400, 'VALIDATION_ERROR');
    await expectError(asA, 'PATCH', `/campaigns/${id}/status`, {}, 400, 'VALIDATION_ERROR');
    now += 61_000;
    const paused = await asA('PATCH', `/campaigns/${id}/status`, { status: 'paused' });
    expect(paused.body).toEqual({ campaign_id: id, old_status: 'active', new_status: 'paused', updated_at: new Date(now).toISOString() });
    now += 61_000;
    expect((await asA('GET', `/campaigns/${id}/status`)).body).toMatchObject({
      campaign_id: id,
      status: 'paused',
      stats: { total_candidates: 0, interviews_completed: 0, average_score: null },
    });
    now += 61_000;
    expect((await asA('PATCH', `/campaigns/${id}/status`, { status: 'completed' })).body.new_status).toBe('completed');
    const error = await expectError(asA, 'PATCH', `/campaigns/${id}/status`, { status: 'active' }, 400, 'VALIDATION_ERROR');
    expect(error.details).toEqual({ status: 'a completed campaign cannot change status' });
    await expectError(asA, 'POST', `/campaigns/${id}/candidates`, { candidates: [person(1)] }, 400, 'VALIDATION_ERROR');
  });

  it("404 CAMPAIGN_NOT_FOUND on every campaign route for another agency's campaign; 404 RESOURCE_NOT_FOUND off the route table", async () => {
    for (const [method, path, body] of [
      ['GET', `/campaigns/${campaignOfB}`, undefined],
      ['GET', `/campaigns/${campaignOfB}/status`, undefined],
      ['PATCH', `/campaigns/${campaignOfB}/status`, { status: 'paused' }],
      ['GET', `/campaigns/${campaignOfB}/candidates`, undefined],
      ['POST', `/campaigns/${campaignOfB}/candidates`, { candidates: [person(1)] }],
      ['POST', `/campaigns/${campaignOfB}/source`, { candidates: [person(1)] }],
      ['GET', '/campaigns/cmp_nothing_here/status', undefined],
    ] as const) {
      const error = await expectError(asA, method, path, body, 404, 'CAMPAIGN_NOT_FOUND');
      expect(error.details).toHaveProperty('campaign_id');
    }
    await expectError(asA, 'GET', '/campaigns/create/everything', undefined, 404, 'RESOURCE_NOT_FOUND');
    await expectError(asA, 'DELETE', `/campaigns/${campaignId}`, undefined, 404, 'RESOURCE_NOT_FOUND');
    // B still sees its own campaign.
    now += 61_000;
    expect((await asB('GET', `/campaigns/${campaignOfB}/status`)).status).toBe(200);
  });
});

describe('authentication: the four 401 codes', () => {
  const rows: Array<[string, string | null, string]> = [
    ['no X-API-Key header', null, 'MISSING_API_KEY'],
    ['a key without the live_ prefix', `sk_test_${'a'.repeat(40)}`, 'INVALID_API_KEY_FORMAT'],
    ['a key of 31 characters after live_', `sk_live_${'a'.repeat(31)}`, 'INVALID_API_KEY_FORMAT'],
    ['a key with a space', `sk_live_${'a'.repeat(20)} ${'a'.repeat(20)}`, 'INVALID_API_KEY_FORMAT'],
    ['a well-formed key nobody was given', `sk_live_${'z'.repeat(32)}`, 'INVALID_API_KEY'],
    ["a disabled agency's key", KEY_OFF, 'AGENCY_INACTIVE'],
  ];
  it.each(rows.map(([name, key, code]) => ({ name, key, code })))('$name: 401 $code, on every endpoint', async ({ key, code }) => {
    const call = apiClient(sandbox.apiUrl, key);
    for (const [method, path] of [
      ['GET', '/voices'],
      ['GET', '/account/credits'],
      ['POST', '/campaigns/create'],
      ['GET', `/campaigns/${campaignId}/candidates`],
      ['GET', '/nowhere'],
    ] as const) {
      const error = await expectError(call, method, path, method === 'POST' ? JOB : undefined, 401, code);
      if (code === 'MISSING_API_KEY' || code === 'INVALID_API_KEY_FORMAT') expect(error.details).toEqual({ header: 'X-API-Key' });
    }
  });

  it('an empty header is a missing key; a repeated header is malformed', async () => {
    await expectError(apiClient(sandbox.apiUrl, ''), 'GET', '/voices', undefined, 401, 'MISSING_API_KEY');
    const repeated = await new Promise<string>((resolve, reject) => {
      const url = new URL(`${sandbox.apiUrl}/voices`);
      const req = httpRequest(
        {
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          headers: ['Host', url.host, 'X-API-Key', KEY_A, 'X-API-Key', KEY_A] as unknown as Record<string, string>,
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
          res.on('end', () => resolve(`${res.statusCode} ${JSON.parse(text).error.code}`));
        },
      );
      req.on('error', reject);
      req.end();
    });
    expect(repeated).toBe('401 INVALID_API_KEY_FORMAT');
  });
});

describe('402 INSUFFICIENT_CREDITS', () => {
  it('creating a campaign with no credits: details credits_available', async () => {
    const poor = await createSandbox({ apiKeys: [KEY_A], credits: 0, log: () => {} });
    try {
      const error = await expectError(apiClient(poor.apiUrl, KEY_A), 'POST', '/campaigns/create', JOB, 402, 'INSUFFICIENT_CREDITS');
      expect(error.details).toEqual({ credits_available: 0 });
    } finally {
      await poor.close();
    }
  });

  it('adding candidates the balance cannot cover: details required and available, and nothing is added', async () => {
    const poor = await createSandbox({ apiKeys: [KEY_A], credits: 1.5, interviewMs: 600_000, log: () => {} });
    try {
      const call = apiClient(poor.apiUrl, KEY_A);
      const id = (await call('POST', '/campaigns/create', JOB)).body.campaign_id;
      const error = await expectError(
        call,
        'POST',
        `/campaigns/${id}/candidates`,
        { candidates: [person(1), person(2)] },
        402,
        'INSUFFICIENT_CREDITS',
      );
      expect(error.details).toEqual({ required: 2, available: 1.5 });
      expect((await call('GET', `/campaigns/${id}/status`)).body.stats.total_candidates).toBe(0);
      // Two SMS (0.5) and an e-mail (free) fit; then one call (1) does, the next does not.
      const sourced = await call('POST', `/campaigns/${id}/candidates`, {
        contact_mode: 'sms',
        candidates: [person(3), person(4), { first_name: 'E', last_name: 'M', email: 'e@m.fr' }],
      });
      expect(sourced.body).toMatchObject({ candidates_sourced: 3, sms_sent: 2, emails_sent: 1 });
      expect((await call('POST', `/campaigns/${id}/candidates`, { candidates: [person(5)] })).status).toBe(201);
      await expectError(call, 'POST', `/campaigns/${id}/candidates`, { candidates: [person(6)] }, 402, 'INSUFFICIENT_CREDITS');
      expect((await call('GET', '/account/credits')).body).toEqual({
        credits_available: 0,
        credits_used_this_month: 2,
        subscription_type: 'Service Resonance',
        reset_date: expect.stringMatching(/^\d{4}-\d{2}-01$/),
      });
      // An e-mail invitation is free: it is still accepted at 0 credits.
      expect(
        (
          await call('POST', `/campaigns/${id}/candidates`, {
            contact_mode: 'email',
            candidates: [{ first_name: 'F', last_name: 'M', email: 'f@m.fr' }],
          })
        ).status,
      ).toBe(201);
    } finally {
      await poor.close();
    }
  });
});

describe('candidates: limits, phone forms, contact modes, duplicates', () => {
  it('1 to 100 candidates per request; a contact mode of the list', async () => {
    const path = `/campaigns/${campaignId}/candidates`;
    const error = await expectError(
      asA,
      'POST',
      path,
      { candidates: Array.from({ length: 101 }, (_, i) => person(i)) },
      400,
      'TOO_MANY_CANDIDATES',
    );
    expect(error.details).toMatchObject({ max: 100 });
    await expectError(asA, 'POST', path, { candidates: [] }, 400, 'VALIDATION_ERROR');
    await expectError(asA, 'POST', path, {}, 400, 'VALIDATION_ERROR');
    await expectError(asA, 'POST', path, { candidates: [person(1)], contact_mode: 'fax' }, 400, 'VALIDATION_ERROR');
    await expectError(
      asA,
      'POST',
      `/campaigns/${campaignId}/source`,
      { candidates: [person(1)], contact_mode: 'email' },
      400,
      'VALIDATION_ERROR',
    );
  });

  it('phones: the three French mobile forms are accepted; other forms and landlines are reported by index', async () => {
    const phones: Array<[string, boolean]> = [
      ['0612345678', true],
      ['0712345678', true],
      ['06 22 34 56 78', true],
      ['+33632345678', true],
      ['+33742345678', true],
      ['0123456789', false], // a landline
      ['+33152345678', false],
      ['06-12-34-56-78', false],
      ['06.12.34.56.78', false],
      ['0612 34 56 78', false],
      ['612345678', false],
      ['+330612345678', false],
      ['0033612345678', false],
      ['061234567', false],
      ['06123456789', false],
      [' 0612345679', false],
    ];
    now += 61_000;
    const id = (await asA('POST', '/campaigns/create', JOB)).body.campaign_id;
    now += 61_000;
    const answer = await asA('POST', `/campaigns/${id}/candidates`, {
      candidates: phones.map(([phone], i) => ({ first_name: 'P', last_name: `N${i}`, phone_number: phone, email: `p${i}@exemple.fr` })),
    });
    expect(answer.status).toBe(201);
    const refused = phones.flatMap(([, ok], i) => (ok ? [] : [i]));
    expect(answer.body.errors.map((e: { index: number }) => e.index)).toEqual(refused);
    for (const e of answer.body.errors)
      expect(e).toMatchObject({ code: 'INVALID_PHONE_NUMBER', error: expect.stringContaining('phone_number') });
    expect(answer.body).toMatchObject({ candidates_added: 5, candidates_skipped: 0, calls_queued: 5 });
    now += 61_000;
    const listed = (await asA('GET', `/campaigns/${id}/candidates?sort=date_asc`)).body.candidates.map((c: { phone: string }) => c.phone);
    expect(listed).toEqual(['+33612345678', '+33712345678', '+33622345678', '+33632345678', '+33742345678']);
  });

  it('call mode needs phone and e-mail; sms falls back to e-mail and e-mail to SMS; a candidate already there is skipped', async () => {
    now += 61_000;
    const id = (await asA('POST', '/campaigns/create', JOB)).body.campaign_id;
    now += 61_000;
    const call = await asA('POST', `/campaigns/${id}/candidates`, {
      contact_mode: 'call',
      candidates: [
        person(1),
        { first_name: 'No', last_name: 'Mail', phone_number: '0611111111' },
        { first_name: 'No', last_name: 'Phone', email: 'no.phone@exemple.fr' },
        { first_name: 'Bad', last_name: 'Mail', phone_number: '0611111112', email: 'not-an-address' },
        { last_name: 'Anonymous', phone_number: '0611111113', email: 'anon@exemple.fr' },
        person(1, { first_name: 'Same phone', email: 'other@exemple.fr' }),
        person(2, { email: 'CANDIDAT1@exemple.fr' }),
        'not an object',
      ],
    });
    expect(call.body).toMatchObject({ candidates_added: 1, candidates_skipped: 2, calls_queued: 1 });
    expect(call.body.errors.map((e: { index: number; code: string }) => [e.index, e.code])).toEqual([
      [1, 'VALIDATION_ERROR'],
      [2, 'VALIDATION_ERROR'],
      [3, 'VALIDATION_ERROR'],
      [4, 'VALIDATION_ERROR'],
      [7, 'VALIDATION_ERROR'],
    ]);
    now += 61_000;
    const sms = await asA('POST', `/campaigns/${id}/candidates`, {
      contact_mode: 'sms',
      candidates: [
        person(3),
        { first_name: 'Mail', last_name: 'Only', email: 'mail.only@exemple.fr' },
        { first_name: 'Bad', last_name: 'Phone', phone: '01 23 45 67 89', email: 'bad.phone@exemple.fr' },
        { first_name: 'Nothing', last_name: 'Valid', phone: '12' },
        { first_name: 'Nothing', last_name: 'At all' },
      ],
    });
    expect(sms.body).toMatchObject({ candidates_sourced: 3, candidates_skipped: 0, sms_sent: 1, emails_sent: 2 });
    expect(sms.body.errors.map((e: { index: number; code: string }) => [e.index, e.code])).toEqual([
      [3, 'INVALID_PHONE_NUMBER'],
      [4, 'VALIDATION_ERROR'],
    ]);
    now += 61_000;
    const email = await asA('POST', `/campaigns/${id}/candidates`, {
      contact_mode: 'email',
      candidates: [person(5), { first_name: 'Phone', last_name: 'Only', phone_number: '+33755555555' }, person(3)],
    });
    expect(email.body).toMatchObject({ candidates_sourced: 2, candidates_skipped: 1, sms_sent: 1, emails_sent: 1, errors: [] });
    now += 61_000;
    const source = await asA('POST', `/campaigns/${id}/source`, {
      candidates: [{ first_name: 'S', last_name: 'Ms', phone: '0766666666' }],
    });
    expect(source.status).toBe(201);
    expect(source.body).toMatchObject({ candidates_sourced: 1, sms_sent: 1, candidates_skipped: 0 });
    now += 61_000;
    const list = (await asA('GET', `/campaigns/${id}/candidates?per_page=100`)).body;
    expect(list.pagination.total).toBe(1 + 3 + 2 + 1);
    const sourced = list.candidates
      .filter((c: { is_sourced: boolean }) => c.is_sourced)
      .map((c: { last_name: string }) => c.last_name)
      .sort();
    // Sourced means reached by SMS: person 3, "Phone Only" (e-mail mode fell back to SMS) and the source call.
    expect(sourced).toEqual(['Ms', 'Nom3', 'Only']);
  });
});

describe('GET /campaigns/{id}/candidates: query parameters', () => {
  const rows: Array<[string, number]> = [
    ['per_page=0', 400],
    ['per_page=101', 400],
    ['per_page=1', 200],
    ['per_page=100', 200],
    ['per_page=abc', 400],
    ['per_page=2.5', 400],
    ['per_page=1&per_page=2', 400],
    ['page=0', 400],
    ['page=1', 200],
    ['sort=name', 400],
    ['sort=score_asc', 200],
    ['status=rejected', 400],
    ['status=voicemail', 200],
    ['status=incomplete', 200],
    ['min_score=11', 400],
    ['min_score=-1', 400],
    ['min_score=7.5', 200],
  ];
  it.each(rows)('%s: %i', async (query, status) => {
    now += 61_000;
    const answer = await asA('GET', `/campaigns/${campaignId}/candidates?${query}`);
    expect(answer.status).toBe(status);
    if (status === 400) {
      expect(answer.body.error.code).toBe('VALIDATION_ERROR');
      expect(Object.keys(answer.body.error.details)).toEqual([query.split('=')[0]]);
    }
  });
});

describe('limits', () => {
  it('429 RATE_LIMIT_EXCEEDED past 60 requests a minute, per key, with details.retry_after; 1,000 an hour', async () => {
    let t = Date.parse('2026-03-10T09:00:00.000Z');
    const limited = await createSandbox({ apiKeys: [KEY_A, KEY_B], clock: { now: () => t }, log: () => {} });
    try {
      const a = apiClient(limited.apiUrl, KEY_A);
      const b = apiClient(limited.apiUrl, KEY_B);
      for (let i = 0; i < 60; i++) expect((await a('GET', '/voices')).status).toBe(200);
      const over = await a('GET', '/voices');
      expect(over.status).toBe(429);
      expect(over.body.error).toMatchObject({ code: 'RATE_LIMIT_EXCEEDED', details: { retry_after: 60 } });
      expect(over.headers.get('retry-after')).toBe('60');
      expect((await b('GET', '/voices')).status).toBe(200);
      t += 30_000;
      expect((await a('GET', '/account/credits')).body.error.details.retry_after).toBe(30);
      t += 30_001;
      expect((await a('GET', '/voices')).status).toBe(200);
      // Spread over minutes, the hour's 1,000th request passes and the next is refused.
      let sent = 61;
      while (sent < 1000) {
        t += 61_000;
        const batch = Math.min(59, 1000 - sent);
        const answers = await Promise.all(Array.from({ length: batch }, () => a('GET', '/voices')));
        expect(answers.every((x) => x.status === 200)).toBe(true);
        sent += batch;
      }
      t += 61_000;
      const hourly = await a('GET', '/voices');
      expect(hourly.status).toBe(429);
      expect(hourly.body.error.details).toMatchObject({ window: 'hour', retry_after: expect.any(Number) });
      expect(hourly.body.error.details.retry_after).toBeGreaterThan(60);
    } finally {
      await limited.close();
    }
  });

  it('a body over 10 MB is refused with 413 before it is read', async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const url = new URL(`${sandbox.apiUrl}/campaigns/create`);
      const req = httpRequest(
        {
          method: 'POST',
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          headers: { 'x-api-key': KEY_A, 'content-type': 'application/json', 'content-length': String(10 * 1024 * 1024 + 1) },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode!);
        },
      );
      req.on('error', reject);
      req.write('{');
    });
    expect(status).toBe(413);
    // 10 MB of JSON exactly is read (and then judged on its content).
    now += 61_000;
    const padding = 'x'.repeat(10 * 1024 * 1024 - Buffer.byteLength(JSON.stringify({ ...JOB, additional_info: '' })));
    const big = await asA('POST', '/campaigns/create', JSON.stringify({ ...JOB, additional_info: padding }));
    expect(big.status).toBe(201);
  });
});
