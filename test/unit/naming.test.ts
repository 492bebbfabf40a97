// Which erased people a stored body names (src/events/naming.ts): values, never substrings; JSON
// escapes decoded at any depth; a phone in any of the forms the service accepts.
import { describe, expect, it } from 'vitest';
import { candidatesNamed, emailKey, namingIndex, phoneKey } from '../../src/events/naming.js';

const index = namingIndex([
  { candidate_id: 'cand-1', email: 'Jeanne.Dupont@Example.org', phone: '06 55 50 12 34' },
  { candidate_id: 'cand-1-bis', email: 'jeanne.dupont@example.org', phone: null },
  { candidate_id: 'cand:odd', email: "o'neil@x.fr", phone: 'unknown' },
]);
const named = (body: string) => [...candidatesNamed(Buffer.from(body), index)].sort();

describe('candidatesNamed', () => {
  it.each([
    ['an escaped e-mail in a JSON string', '{"data":{"mail":"jeanne.dupont\\u0040example.org"}}', ['cand-1', 'cand-1-bis']],
    ['an e-mail in another case, at any depth', '{"a":[[{"b":["JEANNE.DUPONT@EXAMPLE.ORG"]}]]}', ['cand-1', 'cand-1-bis']],
    ['an e-mail in free text, ended by a full stop', '{"note":"write to jeanne.dupont@example.org."}', ['cand-1', 'cand-1-bis']],
    ['a spaced phone among other figures', '{"note":"called 06 55 50 12 34 on 12 03 2026"}', ['cand-1']],
    ['the phone in E.164', '{"tel":"+33655501234"}', ['cand-1']],
    ['the phone with 00 and spaces', '{"tel":"0033 6 55 50 12 34"}', ['cand-1']],
    ['the phone as a JSON number', '{"tel":33655501234}', ['cand-1']],
    ['a body that is not JSON, with the phone', '{"data":{"phone":+33655501234}}', ['cand-1']],
    ['a body that is not JSON, with an escaped e-mail', '{"data":{"mail":"jeanne.dupont\\u0040example.org"', ['cand-1', 'cand-1-bis']],
    ['an id as a whole value', '{"ref":"cand-1"}', ['cand-1']],
    ['an id that is not one word', 'seen cand:odd today', ['cand:odd']],
    ['an e-mail that is not one word, any case', "mail O'NEIL@x.fr now", ['cand:odd']],
  ])('names the person: %s', (_what, body, ids) => {
    expect(named(body)).toEqual(ids);
  });

  it.each([
    ['a longer e-mail', '{"mail":"xjeanne.dupont@example.org"}'],
    ['a longer e-mail before', 'a.jeanne.dupont@example.org'],
    ['a longer domain', 'jeanne.dupont@example.org.uk'],
    ['a longer id', '{"ref":"cand-12"}'],
    ['an id with a suffix', 'cand-1.5'],
    ['a longer odd id', 'cand:oddity'],
    ['a longer number', '{"tel":"06555012345"}'],
    ['another number', '{"tel":"+33655509999"}'],
    ['an object key only in part', '{"jeanne":"dupont"}'],
    ['a projected phone that is no number ("unknown")', '{"failure_reason":"unknown"}'],
  ])('does not name them: %s', (_what, body) => {
    expect(named(body)).toEqual([]);
  });
});

describe('the keys compared', () => {
  it('reads the three forms the service accepts as one E.164 number, and nothing else', () => {
    for (const form of ['06 12 34 56 78', '0612345678', '+33612345678', '+33 6 12 34 56 78', '0033612345678', '06.12.34.56.78'])
      expect(phoneKey(form)).toBe('+33612345678');
    for (const other of ['612345678', 'unknown', '', '+33']) expect(phoneKey(other)).toBeUndefined();
  });

  it('folds ASCII letters of an e-mail only, as SQLite lower() does', () => {
    expect(emailKey('Jeanne.DUPONT@Example.ORG')).toBe('jeanne.dupont@example.org');
    expect(emailKey('ÉLODIE@x.fr')).toBe('Élodie@x.fr');
  });
});
