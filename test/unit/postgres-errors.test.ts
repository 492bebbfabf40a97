// Which PostgreSQL errors mean "not now" (503, retry later): by SQLSTATE class or code, and by the
// driver's own messages for its connection failures (which carry no code), never by a pattern that
// a query's error could match.
import { describe, expect, it } from 'vitest';
import { unavailable } from '../../src/store/postgres/connection.js';

const withCode = (code: string, message = 'server said so') => Object.assign(new Error(message), { code });

describe('unavailable(error)', () => {
  it('takes the SQLSTATE classes and codes a retry can get past', () => {
    for (const code of ['08006', '08001', '53100', '53300', '57P01', '57014', '58030', '40001', '40P01', '55P03', '25006']) {
      expect(unavailable(withCode(code))?.code, code).toBe(code);
    }
  });

  it('leaves errors that waiting does not cure: an internal error (XX000), a constraint, a syntax error', () => {
    for (const code of ['XX000', 'XX001', '23505', '42601', '42P01', '22P02']) expect(unavailable(withCode(code)), code).toBeUndefined();
  });

  it("takes the socket's errnos", () => {
    for (const code of ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EHOSTUNREACH'])
      expect(unavailable(withCode(code))?.code).toBe(code);
  });

  it("takes node-postgres's connection failures, which have no code, by their messages", () => {
    for (const message of [
      'Connection terminated unexpectedly',
      'Connection terminated due to connection timeout',
      'timeout exceeded when trying to connect',
      'Query read timeout',
      'Client was closed and is not queryable',
    ]) {
      expect(unavailable(new Error(message))?.code, message).toBe('CONNECTION');
    }
    expect(unavailable(new Error('Cannot use a pool after calling end on the pool'))?.code).toBe('CLOSED');
  });

  it('leaves an error of ours whose words only look like a connection problem', () => {
    for (const message of ['cannot connect the candidate to a campaign', 'handler timeout', 'the Connection header differs']) {
      expect(unavailable(new Error(message)), message).toBeUndefined();
    }
  });
});
