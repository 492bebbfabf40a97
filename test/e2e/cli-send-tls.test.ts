// `prequal-hooks send` to a real `prequal-hooks serve` over HTTPS whose certificate comes from a
// private CA, made here with openssl: a refused certificate is said as such (not "is the receiver
// running?"), and --ca, PREQUAL_HOOKS_CA or NODE_EXTRA_CA_CERTS get the event delivered.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { certificateProblem } from '../../src/cli/send-http.js';
import { killChildren, readDb, runCliProcess, startServe, type ServeProcess } from '../support/cli-process.js';
import { createTestPki, type TestPki } from '../support/pki.js';
import { tempDir } from '../support/servers.js';

const SECRET = 'whsec_send_tls_8c2f41d7';
const tmp = tempDir('prequal-hooks-send-tls-');
const path = (name: string) => join(tmp.dir, name);
let pki: TestPki;
/** A private CA, as an agency's own PKI would have. */
function makeCa(): string {
  pki = createTestPki(tmp.dir, 'Agency private CA');
  return pki.ca;
}
/** A server certificate the CA signed, for `subjectAltName` (e.g. IP:127.0.0.1). */
const makeServerCertificate = (name: string, altName: string) => pki.sign(name, `subjectAltName=${altName}`);

const inboxCount = (db: string) => readDb(db, (d) => d.prepare('SELECT count(*) FROM inbox').pluck().get() as number);

describe('prequal-hooks send to an HTTPS receiver with a private CA', () => {
  let ca: string;
  let serve: ServeProcess;
  const db = path('tls.db');
  beforeAll(async () => {
    ca = makeCa();
    const server = makeServerCertificate('receiver', 'IP:127.0.0.1');
    serve = await startServe([
      '--port',
      '0',
      '--host',
      '127.0.0.1',
      '--db',
      db,
      '--secret',
      SECRET,
      '--tls-cert',
      server.cert,
      '--tls-key',
      server.key,
    ]);
    expect(serve.webhookUrl).toMatch(/^https:/);
  });
  afterAll(async () => {
    await serve?.stop().catch(() => undefined);
    killChildren();
    tmp.cleanup();
  });

  it('says the certificate is not trusted, with the code and what to do, and exits 1 without sending', async () => {
    const result = await runCliProcess(['send', 'candidate.added', '--url', serve.webhookUrl, '--secret', SECRET]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(
      /the certificate of 127\.0\.0\.1:\d+ is not trusted: .*\((UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED_CERT_IN_CHAIN)\)/,
    );
    expect(result.stderr).toContain('--ca <file>');
    expect(result.stderr).toContain('NODE_EXTRA_CA_CERTS');
    expect(result.stderr).not.toMatch(/Is the receiver running there/);
    expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(inboxCount(db)).toBe(0);
  });

  it('delivers with --ca, PREQUAL_HOOKS_CA or NODE_EXTRA_CA_CERTS naming the CA', async () => {
    const results = await Promise.all([
      runCliProcess(['send', 'candidate.added', '--url', serve.webhookUrl, '--secret', SECRET, '--ca', ca]),
      runCliProcess(['send', 'credits.low', '--url', serve.webhookUrl, '--secret', SECRET], { env: { PREQUAL_HOOKS_CA: ca } }),
      runCliProcess(['send', 'campaign.created', '--url', serve.webhookUrl, '--secret', SECRET], { env: { NODE_EXTRA_CA_CERTS: ca } }),
    ]);
    for (const result of results)
      expect(result).toEqual({ code: 0, stdout: 'HTTP 200 OK\n{"received":true,"duplicate":false}\n', stderr: '' });
    expect(inboxCount(db)).toBe(3);
  });

  it('says so when the certificate names another host, or has expired, even with the right CA', async () => {
    const other = makeServerCertificate('elsewhere', 'DNS:hooks.agency.example');
    const elsewhere = await startServe([
      '--port',
      '0',
      '--host',
      '127.0.0.1',
      '--db',
      path('elsewhere.db'),
      '--secret',
      SECRET,
      '--tls-cert',
      other.cert,
      '--tls-key',
      other.key,
    ]);
    try {
      const result = await runCliProcess(['send', 'candidate.added', '--url', elsewhere.webhookUrl, '--secret', SECRET, '--ca', ca]);
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/is not trusted: .*\(ERR_TLS_CERT_ALTNAME_INVALID\)\. It was issued for other names/);
    } finally {
      await elsewhere.stop();
    }
    // fetch puts the code on the error's cause: the same sentence.
    const url = new URL(serve.webhookUrl);
    const fetched = await fetch(url, { method: 'POST', body: '{}' }).catch((error: unknown) => error);
    expect((fetched as { cause?: { code?: string } }).cause?.code).toMatch(/UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED_CERT_IN_CHAIN/);
    expect(certificateProblem(fetched, url)).toMatch(/is not trusted: .*--ca <file>/);
    const expired = Object.assign(new Error('certificate has expired'), { code: 'CERT_HAS_EXPIRED' });
    expect(certificateProblem(new TypeError('fetch failed', { cause: expired }), url)).toMatch(
      /\(CERT_HAS_EXPIRED\)\. Check the receiver's certificate dates/,
    );
    expect(certificateProblem(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }), url)).toBeUndefined();
  });

  it('refuses a --ca file that holds no readable certificate (exit 1, one line)', async () => {
    writeFileSync(path('not-a-ca.pem'), 'just text\n');
    writeFileSync(path('broken-ca.pem'), '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n');
    const [text, broken, missing] = await Promise.all([
      runCliProcess(['send', 'candidate.added', '--url', serve.webhookUrl, '--ca', path('not-a-ca.pem')]),
      runCliProcess(['send', 'candidate.added', '--url', serve.webhookUrl, '--ca', path('broken-ca.pem')]),
      runCliProcess(['send', 'candidate.added', '--url', serve.webhookUrl, '--ca', path('nowhere.pem')]),
    ]);
    expect(text.stderr).toMatch(/not-a-ca\.pem \(given by --ca\) holds no PEM certificate/);
    expect(broken.stderr).toMatch(/broken-ca\.pem \(given by --ca\) holds a certificate that cannot be read/);
    expect(missing.stderr).toMatch(/cannot read .*nowhere\.pem \(given by --ca\): no such file/);
    for (const result of [text, broken, missing]) expect(result.code).toBe(1);
  });
});
