// JSON.parse, except where V8 gets it wrong. From V8 12.8 (Node 24) on, JSON.parse can read an
// escaped object key through a key it saw in an earlier parse: after `{"\\":0}`, the key of
// `{"\u0061":0}` reads back as `\` (nodejs/node#63785, open). Two spellings of one event would
// then get two identities, and data would lose a field. Texts with an escaped key (rare: senders
// write keys plainly) are read by the strict parser below, which gives what JSON.parse should.

/** JSON.parse's result for `text`, read without V8's escaped-key fault. Throws SyntaxError. */
export function parseJson(text: string): unknown {
  return hasEscapedKey(text) ? parseStrict(text) : JSON.parse(text);
}

const WHITE = (c: number) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;

/** Whether any object key of the text holds a backslash (a scan of string literals only). */
export function hasEscapedKey(text: string): boolean {
  if (!text.includes('\\')) return false;
  const n = text.length;
  // Outside string literals, a quote can only open one: go from literal to literal.
  for (let at = 0; at < n;) {
    const quote = text.indexOf('"', at);
    if (quote === -1) return false;
    let escaped = false;
    let i = quote + 1;
    for (; i < n; i++) {
      const c = text.charCodeAt(i);
      if (c === 0x5c) {
        escaped = true;
        i++;
      } else if (c === 0x22) break;
    }
    if (i >= n) return false; // an unterminated string: JSON.parse will say so
    at = i + 1;
    if (!escaped) continue;
    // A string followed (after white space) by a colon is a key.
    let j = at;
    while (j < n && WHITE(text.charCodeAt(j))) j++;
    if (text.charCodeAt(j) === 0x3a) return true;
  }
  return false;
}

const ESCAPES: Record<number, string> = { 0x22: '"', 0x5c: '\\', 0x2f: '/', 0x62: '\b', 0x66: '\f', 0x6e: '\n', 0x72: '\r', 0x74: '\t' };
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

/**
 * RFC 8259, as JSON.parse reads it: last duplicate key wins (at the first one's place), `__proto__`
 * is an own member, numbers convert as Number() does, lone surrogates are kept. Iterative, so
 * it takes any depth, as JSON.parse does.
 *
 * One piece on purpose (over 80 lines): it reads every request's body, and its token readers share
 * the cursor `i` as a local variable; split into functions, the cursor would become an object
 * field read and written at every character.
 */
export function parseStrict(text: string): unknown {
  let i = 0;
  const n = text.length;
  const fail = (what: string): never => {
    throw new SyntaxError(`${what} in JSON at position ${i}`);
  };
  const skip = () => {
    while (i < n && WHITE(text.charCodeAt(i))) i++;
  };
  const string = (): string => {
    i++; // the opening quote
    let out = '';
    let start = i;
    for (;;) {
      if (i >= n) fail('Unterminated string');
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        out += text.slice(start, i);
        i++;
        return out;
      }
      if (c < 0x20) fail('Bad control character in string literal');
      if (c !== 0x5c) {
        i++;
        continue;
      }
      out += text.slice(start, i);
      const e = text.charCodeAt(i + 1);
      if (e === 0x75) {
        const hex = text.slice(i + 2, i + 6);
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) fail('Bad Unicode escape');
        out += String.fromCharCode(parseInt(hex, 16));
        i += 6;
      } else {
        const decoded = ESCAPES[e];
        if (decoded === undefined) fail('Bad escaped character');
        out += decoded;
        i += 2;
      }
      start = i;
    }
  };
  const scalar = (): unknown => {
    const c = text.charCodeAt(i);
    if (c === 0x22) return string();
    if (text.startsWith('true', i)) return ((i += 4), true);
    if (text.startsWith('false', i)) return ((i += 5), false);
    if (text.startsWith('null', i)) return ((i += 4), null);
    NUMBER.lastIndex = i;
    const match = NUMBER.exec(text);
    if (match === null || match[0].length === 0) return fail(i >= n ? 'Unexpected end of JSON input' : `Unexpected token '${text[i]}'`);
    i += match[0].length;
    return Number(match[0]);
  };
  const put = (container: Record<string, unknown> | unknown[], key: string | undefined, value: unknown) => {
    if (Array.isArray(container)) container.push(value);
    else if (key === '__proto__') Object.defineProperty(container, key, { value, writable: true, enumerable: true, configurable: true });
    else container[key!] = value;
  };

  // The open containers, and for objects the key whose value comes next.
  const stack: Array<{ container: Record<string, unknown> | unknown[]; key: string | undefined }> = [];
  let result: unknown;
  skip();
  for (;;) {
    // A value starts here.
    skip();
    let value: unknown;
    const c = text.charCodeAt(i);
    if (c === 0x7b || c === 0x5b) {
      i++;
      skip();
      const isObject = c === 0x7b;
      const container: Record<string, unknown> | unknown[] = isObject ? {} : [];
      if (text.charCodeAt(i) === (isObject ? 0x7d : 0x5d)) {
        i++;
        value = container;
      } else {
        let key: string | undefined;
        if (isObject) {
          if (text.charCodeAt(i) !== 0x22) fail('Expected property name');
          key = string();
          skip();
          if (text.charCodeAt(i) !== 0x3a) fail("Expected ':' after property name");
          i++;
        }
        stack.push({ container, key });
        continue;
      }
    } else {
      value = scalar();
    }
    // Close what the value completes.
    for (;;) {
      const top = stack.at(-1);
      if (top === undefined) {
        result = value;
        skip();
        if (i < n) fail(`Unexpected non-whitespace character after JSON`);
        return result;
      }
      put(top.container, top.key, value);
      skip();
      const d = text.charCodeAt(i);
      if (d === 0x2c) {
        i++;
        if (!Array.isArray(top.container)) {
          skip();
          if (text.charCodeAt(i) !== 0x22) fail('Expected double-quoted property name');
          top.key = string();
          skip();
          if (text.charCodeAt(i) !== 0x3a) fail("Expected ':' after property name");
          i++;
        }
        break; // the next value
      }
      if (d === (Array.isArray(top.container) ? 0x5d : 0x7d)) {
        i++;
        stack.pop();
        value = top.container;
        continue;
      }
      fail(i >= n ? 'Unexpected end of JSON input' : `Unexpected token '${text[i]}'`);
    }
  }
}
