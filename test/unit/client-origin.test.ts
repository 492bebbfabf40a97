// Where the API key may go: the address policy and the redirect decision, as pure functions.
import { describe, expect, it } from 'vitest';
import { decideRedirect, MAX_REDIRECTS, serviceUrlProblem, withoutCredentials } from '../../src/client/origin.js';
import { isLoopbackHost } from '../../src/loopback.js';

const host = (url: string) => new URL(url).hostname;

describe('isLoopbackHost', () => {
  it('knows this machine in the forms URL writes it, and nothing else', () => {
    for (const url of [
      'http://localhost',
      'http://LOCALHOST.',
      'http://app.localhost',
      'http://127.0.0.1',
      'http://127.9.8.7',
      'http://0x7f.1',
      'http://2130706433',
      'http://[::1]',
      'http://[::ffff:127.0.0.1]',
    ]) {
      expect(isLoopbackHost(host(url)), url).toBe(true);
    }
    for (const url of [
      'http://api.example.com',
      'http://localhost.example.com',
      'http://127.0.0.1.nip.io',
      'http://10.0.0.1',
      'http://0.0.0.0',
      'http://[::2]',
      'http://[::ffff:10.0.0.1]',
      'http://128.0.0.1',
    ]) {
      expect(isLoopbackHost(host(url)), url).toBe(false);
    }
  });
});

describe('serviceUrlProblem', () => {
  it('accepts https anywhere and http on this machine; refuses http elsewhere unless opted in, naming the opt-in', () => {
    expect(serviceUrlProblem('https://api.example.com', false, 'X')).toBeUndefined();
    expect(serviceUrlProblem('http://127.0.0.1:8789/api/v1', false, 'X')).toBeUndefined();
    expect(serviceUrlProblem('http://api.example.com', true, 'X')).toBeUndefined();
    expect(serviceUrlProblem('http://api.example.com', false, '--allow-it')).toMatch(
      /http:\/\/api\.example\.com is plain http: .* opt in with --allow-it$/,
    );
    expect(serviceUrlProblem('ftp://api.example.com', true, 'X')).toBe('must be an https:// address, got ftp:');
    expect(serviceUrlProblem('api.example.com', false, 'X')).toMatch(/^must be the service address/);
  });
});

describe('a user name and password in the address', () => {
  it('are refused as the service address, and shown masked', () => {
    expect(serviceUrlProblem('https://agency:s3cret@api.example.com', false, 'X')).toBe(
      'must not hold a user name or password (https://***@api.example.com/): the service takes the API key alone',
    );
    expect(serviceUrlProblem('http://token@127.0.0.1:8789', false, 'X')).toMatch(
      /^must not hold a user name or password \(http:\/\/\*\*\*@127\.0\.0\.1:8789\/\)/,
    );
  });

  it('withoutCredentials masks them, parsable or not, and leaves other addresses as they are', () => {
    expect(withoutCredentials('https://agency:s3cret@api.example.com/v1?x=1')).toBe('https://***@api.example.com/v1?x=1');
    expect(withoutCredentials('https://:s3cret@api.example.com')).toBe('https://***@api.example.com/');
    expect(withoutCredentials('https://agency:s3/c#ret@[::1')).toBe('https://***@[::1');
    expect(withoutCredentials('https://api.example.com/a@b')).toBe('https://api.example.com/a@b');
    expect(withoutCredentials('not a url')).toBe('not a url');
  });
});

describe('decideRedirect', () => {
  const from = 'https://api.example.com/api/v1/account/credits';

  it('follows the same origin (a relative Location too), with the method kept by 307/308 and a GET by the others', () => {
    expect(decideRedirect(from, '/v2/account/credits', 302, 'GET', 0)).toEqual({
      follow: true,
      url: 'https://api.example.com/v2/account/credits',
    });
    expect(decideRedirect(from, 'https://api.example.com/x', 307, 'POST', 0)).toEqual({ follow: true, url: 'https://api.example.com/x' });
    expect(decideRedirect(from, 'https://api.example.com/x', 308, 'PATCH', 1)).toEqual({ follow: true, url: 'https://api.example.com/x' });
  });

  it('refuses another origin: another host, another port, another scheme', () => {
    for (const location of [
      'https://evil.example.net/steal',
      'https://api.example.com:8443/x',
      '//evil.example.net/x',
      'https://api.example.com.evil.net/x',
    ]) {
      expect(decideRedirect(from, location, 307, 'GET', 0), location).toMatchObject({
        follow: false,
        reason: 'to another origin than https://api.example.com',
      });
    }
    expect(decideRedirect('http://127.0.0.1:8000/a', 'http://127.0.0.1:8001/a', 302, 'GET', 0)).toMatchObject({ follow: false });
  });

  it('refuses https to http, even to the same host', () => {
    expect(decideRedirect(from, 'http://api.example.com/api/v1/account/credits', 301, 'GET', 0)).toEqual({
      follow: false,
      target: 'http://api.example.com/api/v1/account/credits',
      reason: 'from https to plain http',
    });
  });

  it('refuses a 301/302/303 of a POST or PATCH (it would become a GET), a loop past the bound, and keeps credentials out of the target', () => {
    expect(decideRedirect(from, '/x', 303, 'POST', 0)).toMatchObject({ follow: false, reason: 'that would turn the POST into a GET' });
    expect(decideRedirect(from, '/x', 302, 'PATCH', 0)).toMatchObject({ follow: false });
    expect(decideRedirect(from, '/x', 302, 'GET', MAX_REDIRECTS)).toMatchObject({
      follow: false,
      reason: `after ${MAX_REDIRECTS} redirects already`,
    });
    expect(decideRedirect(from, 'https://user:secret@evil.example.net/x', 302, 'GET', 0)).toMatchObject({
      follow: false,
      target: 'https://evil.example.net/x',
    });
  });
});
