import { describe, expect, it } from 'vitest';
import { escapeHtml, html } from '../../src/console/html.js';
import {
  maskEmail,
  maskName,
  maskPhone,
  showBody,
  shown,
  shownError,
  shownIssue,
  shownSummary,
  SHOWN_BODY_CHARS,
} from '../../src/console/mask.js';
import { readEnvelope } from '../../src/events/index.js';
import {
  INVALID_EVENT,
  LARGE_NOT_JSON,
  largeEvent,
  leaked,
  NOT_JSON,
  UNKNOWN_KIND_EVENT,
  ZELPHINE_EVENTS,
} from '../support/personal-bodies.js';

describe('console masking', () => {
  it('masks names, e-mails and phones as the brief shows them', () => {
    expect(maskName('Jean Dupont')).toBe('J*** D***');
    expect(maskName('Éloïse Le Gall-Marchand')).toBe('É*** L*** G***-M***');
    expect(maskEmail('jean.dupont@example.com')).toBe('j***@example.com');
    expect(maskPhone('+33612345678')).toBe('+33 6** ** ** 78');
    expect(maskPhone('+33 6 12 34 56 78')).toBe('+33 6** ** ** 78');
    expect(maskPhone('+4915112345678')).toBe('+49*********78');
  });

  it('shows of a body only the fields known to hold no personal data, the names, e-mails and phones with a hint', () => {
    const body = JSON.stringify({
      event: 'candidate.added',
      timestamp: '2026-11-20T10:00:00Z',
      data: {
        campaign_id: 'cmp_1',
        candidate_id: 'c1',
        first_name: 'Jean',
        last_name: 'Dupont',
        email: 'jean@example.com',
        phone: '+33612345678',
        call_queued: true,
        note: 'Jean rappelle',
      },
      delivery: 'Jean',
    });
    const shownBody = showBody(body, false);
    expect(JSON.parse(shownBody)).toEqual({
      event: 'candidate.added',
      timestamp: '2026-11-20T10:00:00Z',
      data: {
        campaign_id: 'cmp_1',
        candidate_id: 'c1',
        first_name: 'J***',
        last_name: 'D***',
        email: 'j***@example.com',
        phone: '+33 6** ** ** 78',
        call_queued: true,
        note: '***',
      },
      delivery: '***',
    });
    expect(shownBody).toContain('\n  "data"'); // pretty-printed
    expect(JSON.parse(showBody(body, true)).data.note).toBe('Jean rappelle');
  });

  it('masks free text: answers, explanations, alignment, strengths, concerns, availability and salary', () => {
    const [, extended] = ZELPHINE_EVENTS;
    const masked = JSON.parse(showBody(JSON.stringify(extended), false)) as {
      data: Record<string, unknown> & { responses: Array<Record<string, unknown>> };
    };
    expect(leaked(JSON.stringify(masked))).toEqual([]);
    expect(masked.data).toMatchObject({
      interview_score: 7.5,
      availability_start: '2026-12-01',
      availability: '***',
      salary_expectation: '***',
      candidate_alignment: '***',
      strengths: '***',
      concerns: '***',
    });
    expect(masked.data.responses).toEqual([{ question: 'Pouvez-vous vous présenter ?', answer: '***', score: 8, explanation: '***' }]);
    expect(leaked(showBody(JSON.stringify(extended), true))).toContain('Zelphine');
  });

  it('shows a safe field only when its schema accepts the value: a name where an enum, a score or a date goes is masked', () => {
    expect(JSON.parse(showBody(JSON.stringify(INVALID_EVENT), false)).data.failure_reason).toBe('***');
    const odd = {
      ...ZELPHINE_EVENTS[1]!,
      data: {
        ...ZELPHINE_EVENTS[1]!.data,
        interview_score: 'Zelphine',
        availability_start: 'dès que Zelphine peut',
        responses: [{ score: 'Quarkwood', question: { who: 'Zelphine' } }],
      },
    };
    expect(leaked(showBody(JSON.stringify(odd), false))).toEqual([]);
  });

  it('masks every value of a kind it does not know, and keys that are not field names', () => {
    const masked = JSON.parse(showBody(JSON.stringify(UNKNOWN_KIND_EVENT), false)) as Record<string, unknown>;
    expect(masked).toEqual({
      event: 'candidate.callback.requested',
      timestamp: '2026-11-20T10:03:00.000Z',
      data: {
        campaign_id: '***',
        candidate_id: '***',
        contact: { full_name: '***', mobile: '***', address: '***' },
        note: '***',
        '*** (key 1)': '***',
      },
    });
    // A body that is JSON but no envelope: nothing of it.
    expect(JSON.parse(showBody('["Jean Dupont", {"name": "Jean"}, 3]', false))).toEqual(['***', { name: '***' }, '***']);
    expect(
      JSON.parse(showBody('{"event": "campaign.created", "data": {"__proto__": "Jean", "constructor": {"x": "Jean"}}}', false)).data,
    ).toEqual(
      Object.fromEntries([
        ['__proto__', '***'],
        ['constructor', { x: '***' }],
      ]),
    );
  });

  it('masks by the same fields the pages of projected rows, unless revealed', () => {
    expect(shown('first_name', 'Zelphine', false)).toBe('Z***');
    expect(shown('strengths', 'Zelphine est précise', false)).toBe('***');
    expect(shown('availability_start', '2026-12-01', false)).toBe('2026-12-01');
    expect(shown('availability_start', 'quand Zelphine veut', false)).toBe('***');
    expect(shown('status', 'completed', false)).toBe('completed');
    expect(shown('answer', null, false)).toBeNull();
    expect(shown('strengths', 'Zelphine est précise', true)).toBe('Zelphine est précise');
  });

  it('masks what reasons, handler errors and listed rows could quote', () => {
    const notJson = readEnvelope(NOT_JSON);
    expect(notJson.ok).toBe(false);
    const [issue] = (notJson as { issues: Array<{ path: string; message: string }> }).issues;
    expect(issue!.message).toContain('Perrine'); // JSON.parse quotes the body
    expect(shownIssue(issue!, false).message).toMatch(/^Unexpected token "\*\*\*"\.\.\. is not valid JSON$/);
    expect(shownIssue(issue!, true)).toEqual(issue);
    expect(shownIssue({ path: 'data.Zelphine Quarkwood', message: 'the key holds a lone surrogate' }, false).path).toBe('***');
    expect(shownIssue({ path: 'data.responses[0].score', message: 'Too big' }, false).path).toBe('data.responses[0].score');
    expect(shownError('TypeError: CRM refused Zelphine', false)).toBe('TypeError: ***');
    expect(shownError('refused Zelphine', false)).toBe('***');
    expect(shownError('TypeError: CRM refused Zelphine', true)).toBe('TypeError: CRM refused Zelphine');
    const row = {
      inbox_id: 1,
      received_at: '',
      kind: 'x.unknown',
      state: 'unknown' as const,
      verdict: 'accepted',
      attempts: 1,
      processed_at: null,
      campaign_id: 'Zelphine',
      candidate_id: 'Quarkwood',
      reasons: [],
    };
    expect(shownSummary(row, false)).toMatchObject({ campaign_id: '***', candidate_id: '***' });
    expect(shownSummary({ ...row, kind: 'candidate.added' }, false)).toMatchObject({ campaign_id: 'Zelphine', candidate_id: 'Quarkwood' });
  });
});

describe('console HTML', () => {
  it('escapes every interpolated value unless it is markup built by html``', () => {
    const name = '"><img src=x onerror=alert(1)>';
    expect(html`<td title="${name}">${name}</td>`.text).toBe(
      '<td title="&quot;&gt;&lt;img src=x onerror=alert(1)&gt;">&quot;&gt;&lt;img src=x onerror=alert(1)&gt;</td>',
    );
    expect(html`<ul>${['<a>', html`<li>b</li>`]}</ul>`.text).toBe('<ul>&lt;a&gt;<li>b</li></ul>');
    expect(html`${null}${undefined}${false}${0}`.text).toBe('0');
    expect(escapeHtml(`'&`)).toBe('&#39;&amp;');
  });
});

describe('bodies an attacker with the secret could store', () => {
  it('masks a body over 128 KiB by its fields like any other, and cuts only what masking leaves', () => {
    const event = largeEvent();
    const shownBody = showBody(JSON.stringify(event), false);
    expect(leaked(shownBody)).toEqual([]);
    expect(shownBody).toContain('"question": "Question 800 ?"');
    const huge = {
      ...event,
      data: { ...event.data, responses: Array.from({ length: 6000 }, (_, i) => ({ question: `Q${i}`, answer: 'Thessaly', score: 1 })) },
    };
    const cut = showBody(JSON.stringify(huge), false);
    expect(cut.length).toBeLessThan(SHOWN_BODY_CHARS + 100);
    expect(cut).toMatch(/\n… \(\d+ more characters not shown\)$/);
    expect(leaked(cut)).toEqual([]);
  });

  it('shows nothing but the size of a body that is not JSON, small or large; revealed, its first 128 KiB', () => {
    expect(showBody(NOT_JSON, false)).toBe(`(${NOT_JSON.length} characters that are not JSON: nothing of them is shown masked)`);
    expect(showBody(LARGE_NOT_JSON, false)).toBe(
      `(${LARGE_NOT_JSON.length} characters that are not JSON: nothing of them is shown masked)`,
    );
    expect(showBody(NOT_JSON, true)).toBe(NOT_JSON);
    const revealed = showBody('a'.repeat(1024 * 1024), true);
    expect(revealed.length).toBeLessThan(SHOWN_BODY_CHARS + 100);
    expect(revealed).toContain(`${1024 * 1024 - SHOWN_BODY_CHARS} more characters not shown`);
  });

  it('masks JSON nested 100,000 levels instead of failing the page', () => {
    const deep = `{"event": "x", "data": ${'['.repeat(100_000)}"jean.dupont@exemple.fr"${']'.repeat(100_000)}}`;
    const masked = showBody(deep, false);
    expect(masked).not.toContain('jean.dupont');
    expect(masked).toContain('"***"');
    expect(showBody(deep, true)).toContain('jean.dupont@exemple.fr');
  });
});
