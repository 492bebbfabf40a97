import { describe, expect, it } from 'vitest';
import { escapeHtml, html } from '../../src/console/html.js';
import { maskEmail, maskName, maskPhone, maskText, showBody, SHOWN_BODY_CHARS } from '../../src/console/mask.js';

describe('console masking', () => {
  it('masks names, e-mails and phones as the brief shows them', () => {
    expect(maskName('Jean Dupont')).toBe('J*** D***');
    expect(maskName('Éloïse Le Gall-Marchand')).toBe('É*** L*** G***-M***');
    expect(maskEmail('jean.dupont@example.com')).toBe('j***@example.com');
    expect(maskPhone('+33612345678')).toBe('+33 6** ** ** 78');
    expect(maskPhone('+33 6 12 34 56 78')).toBe('+33 6** ** ** 78');
    expect(maskPhone('+4915112345678')).toBe('+49*********78');
  });

  it('masks personal fields at any depth of a JSON body, and e-mails and phones in text that is not JSON', () => {
    const body = JSON.stringify({ event: 'candidate.added', data: { first_name: 'Jean', last_name: 'Dupont', email: 'jean@example.com', phone: '+33612345678', note: 'keep' } });
    const shown = showBody(body, false);
    expect(JSON.parse(shown)).toEqual({ event: 'candidate.added', data: { first_name: 'J***', last_name: 'D***', email: 'j***@example.com', phone: '+33 6** ** ** 78', note: 'keep' } });
    expect(shown).toContain('\n  "data"'); // pretty-printed
    expect(JSON.parse(showBody(body, true)).data.first_name).toBe('Jean');
    expect(showBody('mail jean@example.com or call +33 6 12 34 56 78 {', false)).toBe('mail j***@example.com or call +33 6** ** ** 78 {');
  });
});

describe('console HTML', () => {
  it('escapes every interpolated value unless it is markup built by html``', () => {
    const name = '"><img src=x onerror=alert(1)>';
    expect(html`<td title="${name}">${name}</td>`.text).toBe('<td title="&quot;&gt;&lt;img src=x onerror=alert(1)&gt;">&quot;&gt;&lt;img src=x onerror=alert(1)&gt;</td>');
    expect(html`<ul>${['<a>', html`<li>b</li>`]}</ul>`.text).toBe('<ul>&lt;a&gt;<li>b</li></ul>');
    expect(html`${null}${undefined}${false}${0}`.text).toBe('0');
    expect(escapeHtml(`'&`)).toBe('&#39;&amp;');
  });
});

describe('bodies an attacker with the secret could store', () => {
  // No timing asserted: before the fix, the first took minutes (a quadratic scan) and the second threw.
  it('masks a megabyte without a separator in one pass, showing the first 128 KiB', () => {
    const shown = showBody('a'.repeat(1024 * 1024), false);
    expect(shown.length).toBeLessThan(SHOWN_BODY_CHARS + 100);
    expect(shown).toContain(`${1024 * 1024 - SHOWN_BODY_CHARS} more characters not shown`);
    const long = maskText(`${'7'.repeat(200_000)} ${'b'.repeat(200_000)}@exemple.fr`);
    expect(long).toContain('b***@exemple.fr');
    expect(long.length).toBeLessThan(400_100);
  });

  it('shows JSON nested 100,000 levels as text instead of failing the page', () => {
    const deep = `${'['.repeat(100_000)}"jean.dupont@exemple.fr"${']'.repeat(100_000)}`;
    const shown = showBody(deep, false);
    expect(shown).toContain('j***@exemple.fr');
    expect(shown).not.toContain('jean.dupont');
  });
});
