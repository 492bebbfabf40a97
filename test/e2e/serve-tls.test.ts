// serve over HTTPS, secrets from files, and SIGHUP: the real process, certificates made here with
// openssl, real files, real connections (kept alive across the reloads). What serve refuses before
// it starts (a file it cannot use, --print-config, --help) runs in this process (runInProcess).
import { execFileSync } from 'node:child_process';
import { randomUUID, X509Certificate } from 'node:crypto';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { Agent, request as httpsRequest } from 'node:https';
import { connect } from 'node:tls';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { sampleEvent, signedRequest } from '../../src/testing/index.js';
import { secretFingerprint } from '../../src/signature.js';
import { killChildren, startServe, type ServeProcess } from '../support/cli-process.js';
import { runCli as runInProcess } from '../support/command-io.js';
import { tempDir } from '../support/servers.js';
import { waitFor } from '../support/wait-for.js';

const OLD = 'whsec_old_rotation_3f9a7c1e';
const NEW = 'whsec_new_rotation_b2d84e60';
const TOKEN = 'dash-tls-7c1e9b3a2f';

const tmp = tempDir('prequal-hooks-tls-');
afterAll(() => {
  killChildren();
  tmp.cleanup();
});

/** A self-signed certificate for 127.0.0.1 and its key, made by openssl, at `<name>.crt/.key`. */
function makeCertificate(name: string): { cert: string; key: string; pem: Buffer } {
  const cert = join(tmp.dir, `${name}.crt`);
  const key = join(tmp.dir, `${name}.key`);
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '2',
      '-subj',
      `/CN=${name}`,
      '-addext',
      'subjectAltName=IP:127.0.0.1',
    ],
    { stdio: 'ignore' },
  );
  return { cert, key, pem: readFileSync(cert) };
}

function write(name: string, content: string | Buffer): string {
  const path = join(tmp.dir, name);
  writeFileSync(path, content);
  return path;
}

function newEvent() {
  return sampleEvent('candidate.added', { data: { candidate_id: randomUUID() } });
}

/** POSTs a signed event over HTTPS with the agent; resolves with the status and whether the connection was an old one. */
function postOver(agent: Agent, url: string, secret: string): Promise<{ status: number; reused: boolean }> {
  const { body, headers } = signedRequest(newEvent(), { secret });
  return new Promise((resolve, reject) => {
    const req = httpsRequest(url, { method: 'POST', agent, headers: { ...headers, 'content-length': String(body.byteLength) } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode!, reused: req.reusedSocket }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

function getOver(agent: Agent, url: string, headers: Record<string, string> = {}): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    httpsRequest(url, { agent, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, text }));
    })
      .on('error', reject)
      .end();
  });
}

/** The SHA-256 fingerprint of the certificate a new TLS connection is shown. */
function presentedCertificate(port: number, ca: Buffer[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, ca }, () => {
      resolve(socket.getPeerCertificate().fingerprint256);
      socket.end();
    });
    socket.on('error', reject);
  });
}

function logsWith(serve: ServeProcess, message: string): Array<Record<string, unknown>> {
  return serve.logLines().filter((line) => String(line.msg).startsWith(message));
}

function inboxRows(db: string): number {
  const database = new Database(db, { readonly: true });
  try {
    return (database.prepare('SELECT count(*) AS n FROM inbox').get() as { n: number }).n;
  } finally {
    database.close();
  }
}

describe('serve over HTTPS', () => {
  it('serves webhooks and probes over TLS 1.2 or later, with the certificate given', async () => {
    const one = makeCertificate('serve-one');
    const serve = await startServe([
      '--port',
      '0',
      '--host',
      '127.0.0.1',
      '--db',
      join(tmp.dir, 'https.db'),
      '--secret',
      OLD,
      '--tls-cert',
      one.cert,
      '--tls-key',
      one.key,
    ]);
    expect(serve.webhookUrl).toMatch(/^https:\/\/127\.0\.0\.1:\d+\/webhooks$/);
    const agent = new Agent({ ca: [one.pem] });
    expect((await getOver(agent, `${serve.baseUrl}/healthz`)).status).toBe(200);
    expect((await postOver(agent, serve.webhookUrl, OLD)).status).toBe(200);
    expect((await postOver(agent, serve.webhookUrl, NEW)).status).toBe(401);
    const port = Number(new URL(serve.baseUrl).port);
    expect(await presentedCertificate(port, [one.pem])).toBe(new X509Certificate(one.pem).fingerprint256);

    // TLS 1.1 is refused; TLS 1.2 is enough.
    const old = await new Promise<string>((resolve) => {
      const socket = connect({ host: '127.0.0.1', port, ca: [one.pem], maxVersion: 'TLSv1.1', minVersion: 'TLSv1' }, () =>
        resolve(`connected with ${socket.getProtocol()}`),
      );
      socket.on('error', (error) => resolve(`refused: ${error.message}`));
    });
    expect(old).toMatch(/^refused/);
    const twelve = await new Promise<string | null>((resolve, reject) => {
      const socket = connect(
        { host: '127.0.0.1', port, ca: [one.pem], maxVersion: 'TLSv1.2' },
        () => (resolve(socket.getProtocol()), socket.end()),
      );
      socket.on('error', reject);
    });
    expect(twelve).toBe('TLSv1.2');
    agent.destroy();
    expect(await serve.stop()).toBe(0);
  });

  it('never answers plain HTTP on the TLS port with a 2xx', async () => {
    const one = makeCertificate('plain');
    const db = join(tmp.dir, 'plain.db');
    const serve = await startServe([
      '--port',
      '0',
      '--host',
      '127.0.0.1',
      '--db',
      db,
      '--secret',
      OLD,
      '--tls-cert',
      one.cert,
      '--tls-key',
      one.key,
    ]);
    const httpUrl = serve.webhookUrl.replace('https://', 'http://');
    const { body, headers } = signedRequest(newEvent(), { secret: OLD });
    const outcome = await new Promise<string>((resolve) => {
      const req = httpRequest(httpUrl, { method: 'POST', headers }, (res) => resolve(`answered ${res.statusCode}`));
      req.on('error', (error) => resolve(`closed: ${error.message}`));
      req.end(body);
    });
    expect(outcome).not.toMatch(/^answered 2/);
    expect(await serve.stop()).toBe(0);
    expect(inboxRows(db)).toBe(0);
  });

  it('refuses at start, in one line naming the file, the option that gave it, and with exit 1, a missing, non-PEM or mismatched certificate or key', async () => {
    const one = makeCertificate('start-one');
    const two = makeCertificate('start-two');
    const garbage = write('garbage.pem', 'not a certificate\n');
    const db = join(tmp.dir, 'start.db');
    const cases: Array<[string[], RegExp]> = [
      [
        ['--tls-cert', join(tmp.dir, 'absent.crt'), '--tls-key', one.key],
        /cannot read the TLS certificate .*absent\.crt \(given by --tls-cert\): no such file/,
      ],
      [
        ['--tls-cert', one.cert, '--tls-key', join(tmp.dir, 'absent.key')],
        /cannot read the TLS key .*absent\.key \(given by --tls-key\): no such file/,
      ],
      [
        ['--tls-cert', garbage, '--tls-key', one.key],
        /the TLS certificate .*garbage\.pem \(given by --tls-cert\) is not a PEM certificate/,
      ],
      [['--tls-cert', one.cert, '--tls-key', garbage], /the TLS key .*garbage\.pem \(given by --tls-key\) is not a PEM private key/],
      [
        ['--tls-cert', one.cert, '--tls-key', two.key],
        /the TLS key .*start-two\.key \(given by --tls-key\) does not match the certificate .*start-one\.crt \(given by --tls-cert\)/,
      ],
    ];
    for (const [args, message] of cases) {
      const result = await runInProcess(['serve', '--port', '0', '--host', '127.0.0.1', '--db', db, '--secret', OLD, ...args]);
      expect(result.code, result.stderr).toBe(1);
      expect(result.stderr).toMatch(message);
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
    }
    const alone = await runInProcess(['serve', '--port', '0', '--db', db, '--secret', OLD, '--tls-cert', one.cert]);
    expect(alone.code).toBe(2);
    expect(alone.stderr).toMatch(/--tls-cert needs --tls-key/);
  });
});

describe('secrets from files', () => {
  it('reads the secret (one a line), the dashboard token and the API key from the files the _FILE variables name; print-config masks them', async () => {
    const secretFile = write('secrets.txt', `${OLD}\r\n\n${NEW}\n`);
    const tokenFile = write('token.txt', `${TOKEN}\n`);
    const keyFile = write('api-key.txt', 'key_live_0f9e8d7c6b5a\n');
    const env = {
      PREQUAL_HOOKS_SECRET_FILE: secretFile,
      PREQUAL_HOOKS_DASHBOARD_TOKEN_FILE: tokenFile,
      PREQUAL_HOOKS_API_KEY_FILE: keyFile,
    };
    const printed = await runInProcess(['serve', '--print-config'], { env });
    expect(printed.code, printed.stderr).toBe(0);
    const dump = JSON.parse(printed.stdout) as Record<string, { value: unknown; from: string }>;
    expect(dump.secret).toEqual({ value: ['***', '***'], from: `PREQUAL_HOOKS_SECRET_FILE (${secretFile})` });
    expect(dump['secret-file']).toEqual({ value: secretFile, from: 'PREQUAL_HOOKS_SECRET_FILE' });
    expect(dump['dashboard-token']).toEqual({ value: '***', from: `PREQUAL_HOOKS_DASHBOARD_TOKEN_FILE (${tokenFile})` });
    expect(dump['api-key']).toEqual({ value: '***', from: `PREQUAL_HOOKS_API_KEY_FILE (${keyFile})` });
    for (const secret of [OLD, NEW, TOKEN, 'key_live_0f9e8d7c6b5a']) expect(printed.stdout).not.toContain(secret);

    const help = await runInProcess(['serve', '--help']);
    expect(help.stdout).toMatch(/--secret-file <path>[\s\S]*\[PREQUAL_HOOKS_SECRET_FILE\]/);
    expect(help.stdout).toMatch(/--dashboard-token-file <path>[\s\S]*\[PREQUAL_HOOKS_DASHBOARD_TOKEN_FILE\]/);
    expect(help.stdout).toMatch(/--api-key-file <path>[\s\S]*\[PREQUAL_HOOKS_API_KEY_FILE\]/);

    const serve = await startServe(['--port', '0', '--host', '127.0.0.1', '--db', join(tmp.dir, 'files.db')], env);
    for (const secret of [OLD, NEW]) {
      const { body, headers } = signedRequest(newEvent(), { secret });
      expect((await fetch(serve.webhookUrl, { method: 'POST', headers, body })).status).toBe(200);
    }
    expect((await fetch(`${serve.baseUrl}/metrics`, { headers: { Authorization: `Bearer ${TOKEN}` } })).status).toBe(200);
    expect(await serve.stop()).toBe(0);
    expect(serve.stdout() + serve.stderr()).not.toContain(TOKEN);
  });

  it('refuses a missing or empty file in one line naming it (exit 1), a short token from a file (exit 2), and both a secret and its file', async () => {
    const db = join(tmp.dir, 'refused.db');
    const empty = write('empty.txt', '\n  \n');
    const missing = await runInProcess(['serve', '--db', db], { env: { PREQUAL_HOOKS_SECRET_FILE: join(tmp.dir, 'nowhere.txt') } });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(
      /^prequal-hooks serve: cannot read .*nowhere\.txt \(given by PREQUAL_HOOKS_SECRET_FILE\): no such file\n$/,
    );
    const blank = await runInProcess(['serve', '--db', db, '--secret-file', empty]);
    expect(blank.code).toBe(1);
    expect(blank.stderr).toMatch(/^prequal-hooks serve: .*empty\.txt \(given by --secret-file\) is empty: it must hold the secret\n$/);
    const short = await runInProcess(['serve', '--db', db, '--secret', OLD], {
      env: { PREQUAL_HOOKS_DASHBOARD_TOKEN_FILE: write('short.txt', 'tooshort\n') },
    });
    expect(short.code).toBe(2);
    expect(short.stderr).toMatch(/PREQUAL_HOOKS_DASHBOARD_TOKEN_FILE \(.*short\.txt\) must be at least 16 characters/);
    expect(short.stderr).not.toContain('tooshort');
    const both = await runInProcess(['serve', '--db', db, '--secret', OLD, '--secret-file', write('s.txt', NEW)]);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/give --secret or --secret-file, not both/);
    // A flag wins over a variable, whichever of the pair each is.
    const flagWins = await runInProcess(['serve', '--print-config', '--secret', OLD], {
      env: { PREQUAL_HOOKS_SECRET_FILE: join(tmp.dir, 'nowhere.txt') },
    });
    expect(flagWins.code).toBe(0);
    expect((JSON.parse(flagWins.stdout) as Record<string, { from: string }>).secret!.from).toBe('--secret');
  });
});

describe('SIGHUP', () => {
  it('rotates the secret and the certificate under load: no connection dropped, every acknowledged event stored, use counted per fingerprint', async () => {
    const one = makeCertificate('rotate-one');
    const two = makeCertificate('rotate-two');
    const cert = write('live.crt', one.pem);
    const key = write('live.key', readFileSync(one.key));
    const secretFile = write('live-secrets.txt', `${OLD}\n`);
    const db = join(tmp.dir, 'rotate.db');
    const serve = await startServe([
      '--port',
      '0',
      '--host',
      '127.0.0.1',
      '--db',
      db,
      '--secret-file',
      secretFile,
      '--tls-cert',
      cert,
      '--tls-key',
      key,
      '--dashboard-token',
      TOKEN,
    ]);
    const port = Number(new URL(serve.baseUrl).port);
    const agent = new Agent({ keepAlive: true, maxSockets: 4, ca: [one.pem, two.pem] });
    let signing = OLD;
    let running = true;
    const statuses: number[] = [];
    const failures: string[] = [];
    let reusedAfterNewCertificate = 0;
    let certificateSwapped = false;
    const worker = async () => {
      while (running) {
        try {
          const answer = await postOver(agent, serve.webhookUrl, signing);
          statuses.push(answer.status);
          if (certificateSwapped && answer.reused) reusedAfterNewCertificate++;
        } catch (error) {
          failures.push((error as Error).message);
        }
      }
    };
    const workers = [worker(), worker(), worker(), worker()];
    // Deliveries go on between the reloads: each step waits for 20 more answers, not for a time.
    const traffic = async (what: string) => {
      const from = statuses.length + failures.length;
      await waitFor(() => statuses.length + failures.length >= from + 20, 10_000, `20 more deliveries ${what}`);
    };
    const hangUp = async (message: string, times: number) => {
      serve.child.kill('SIGHUP');
      await waitFor(() => (logsWith(serve, message).length >= times ? true : undefined), 5000, message);
      await traffic(`after "${message}"`);
    };

    await traffic('before any reload');
    writeFileSync(secretFile, `${OLD}\n${NEW}\n`);
    await hangUp('SIGHUP: webhook secrets re-read', 1);
    signing = NEW;
    writeFileSync(cert, two.pem);
    writeFileSync(key, readFileSync(two.key));
    await hangUp('SIGHUP: TLS certificate and key re-read', 1);
    certificateSwapped = true;
    await waitFor(
      () => reusedAfterNewCertificate > 0,
      10_000,
      'a connection opened on the first certificate to carry a delivery after the swap',
    );
    writeFileSync(secretFile, `${NEW}\n`);
    await hangUp('SIGHUP: webhook secrets re-read', 2);
    running = false;
    await Promise.all(workers);

    expect(failures).toEqual([]);
    expect(statuses.length).toBeGreaterThan(20);
    expect(statuses.filter((status) => status !== 200)).toEqual([]);
    // Connections opened on the first certificate went on carrying requests after the swap.
    expect(reusedAfterNewCertificate).toBeGreaterThan(0);
    expect(await presentedCertificate(port, [one.pem, two.pem])).toBe(new X509Certificate(two.pem).fingerprint256);
    expect((await postOver(agent, serve.webhookUrl, OLD)).status).toBe(401);

    const metrics = (await getOver(agent, `${serve.baseUrl}/metrics`, { Authorization: `Bearer ${TOKEN}` })).text;
    const verified = (secret: string) =>
      Number(
        new RegExp(`prequal_hooks_verified_requests_total\\{account="default",secret="${secretFingerprint(secret)}"\\} (\\d+)`).exec(
          metrics,
        )?.[1] ?? 0,
      );
    expect(verified(OLD)).toBeGreaterThan(0);
    expect(verified(NEW)).toBeGreaterThan(0);
    expect(verified(OLD) + verified(NEW)).toBe(statuses.length);
    expect(metrics).not.toContain(OLD);

    const overview = await getOver(agent, `${serve.baseUrl}/dashboard/`, { Authorization: `Bearer ${TOKEN}` });
    expect(overview.status).toBe(200);
    expect(overview.text).toContain(`data-secret="${secretFingerprint(NEW)}">${verified(NEW)}<`);
    expect(overview.text).toContain(`data-secret="${secretFingerprint(OLD)}">${verified(OLD)}<`);

    agent.destroy();
    expect(await serve.stop()).toBe(0);
    expect(inboxRows(db)).toBe(statuses.length);
    expect(serve.stdout() + serve.stderr()).not.toContain(NEW);
  }, 30_000);

  it('keeps the secrets and the certificate in use, and logs an error, when the files are bad at reload', async () => {
    const one = makeCertificate('bad-one');
    const cert = write('bad-live.crt', one.pem);
    const key = write('bad-live.key', readFileSync(one.key));
    const secretFile = write('bad-secrets.txt', `${OLD}\n`);
    const serve = await startServe([
      '--port',
      '0',
      '--host',
      '127.0.0.1',
      '--db',
      join(tmp.dir, 'bad.db'),
      '--secret-file',
      secretFile,
      '--tls-cert',
      cert,
      '--tls-key',
      key,
    ]);
    const port = Number(new URL(serve.baseUrl).port);
    writeFileSync(secretFile, '\n');
    writeFileSync(cert, 'garbage\n');
    serve.child.kill('SIGHUP');
    await waitFor(() => (serve.logLines().filter((line) => line.level === 50).length >= 2 ? true : undefined), 5000, 'two errors');
    const errors = serve
      .logLines()
      .filter((line) => line.level === 50)
      .map((line) => String(line.msg));
    expect(errors).toContainEqual(
      expect.stringMatching(/bad-secrets\.txt \(given by --secret-file\) is empty.*the secrets in use are kept/),
    );
    expect(errors).toContainEqual(
      expect.stringMatching(/bad-live\.crt \(given by --tls-cert\) is not a PEM certificate.*the certificate in use is kept/),
    );
    const agent = new Agent({ ca: [one.pem] });
    expect((await postOver(agent, serve.webhookUrl, OLD)).status).toBe(200);
    expect(await presentedCertificate(port, [one.pem])).toBe(new X509Certificate(one.pem).fingerprint256);

    // Then a missing secret file: the same.
    writeFileSync(cert, one.pem);
    execFileSync('rm', [secretFile]);
    serve.child.kill('SIGHUP');
    await waitFor(
      () => (serve.logLines().some((line) => /cannot read .*bad-secrets\.txt/.test(String(line.msg))) ? true : undefined),
      5000,
      'missing file error',
    );
    expect((await postOver(agent, serve.webhookUrl, OLD)).status).toBe(200);
    agent.destroy();
    expect(await serve.stop()).toBe(0);
  });

  it('rotates the console, metrics and feed tokens from their files; a bad token file keeps the tokens in use', async () => {
    const dashboardFile = write('dash-token.txt', 'dashboard-token-before-0001\n');
    const metricsFile = write('metrics-token.txt', 'metrics-token-before-00001\n');
    const feedFile = write('feed-token.txt', 'feed-token-before-000001\n');
    const serve = await startServe([
      '--port',
      '0',
      '--host',
      '127.0.0.1',
      '--db',
      join(tmp.dir, 'tokens.db'),
      '--secret',
      OLD,
      '--dashboard-token-file',
      dashboardFile,
      '--metrics-token-file',
      metricsFile,
      '--feed-token-file',
      feedFile,
    ]);
    const status = async (path: string, token: string) =>
      (await fetch(`${serve.baseUrl}${path}`, { headers: { Authorization: `Bearer ${token}` } })).status;
    expect(await status('/metrics', 'metrics-token-before-00001')).toBe(200);
    expect(await status('/dashboard/', 'dashboard-token-before-0001')).toBe(200);
    expect(await status('/changes', 'feed-token-before-000001')).toBe(200);

    writeFileSync(dashboardFile, 'dashboard-token-after-00002\n');
    writeFileSync(metricsFile, 'metrics-token-after-000002\n');
    writeFileSync(feedFile, 'feed-token-after-0000002\n');
    serve.child.kill('SIGHUP');
    await waitFor(() => (logsWith(serve, 'SIGHUP: tokens re-read').length > 0 ? true : undefined), 5000, 'the tokens re-read');
    expect(await status('/metrics', 'metrics-token-before-00001')).toBe(401);
    expect(await status('/dashboard/', 'dashboard-token-before-0001')).toBe(401);
    expect(await status('/metrics', 'metrics-token-after-000002')).toBe(200);
    expect(await status('/dashboard/', 'dashboard-token-after-00002')).toBe(200);
    expect(await status('/dashboard/', 'metrics-token-after-000002')).toBe(403);
    expect(await status('/changes', 'feed-token-before-000001')).toBe(401);
    expect(await status('/changes', 'feed-token-after-0000002')).toBe(200);

    // Too short, then alike: refused, and the tokens in use kept.
    writeFileSync(metricsFile, 'short\n');
    serve.child.kill('SIGHUP');
    await waitFor(
      () =>
        serve
          .logLines()
          .some((line) => line.level === 50 && /must be at least 16 characters.*the tokens in use are kept/.test(String(line.msg)))
          ? true
          : undefined,
      5000,
      'the refusal',
    );
    writeFileSync(metricsFile, 'dashboard-token-after-00002\n');
    serve.child.kill('SIGHUP');
    await waitFor(
      () =>
        serve.logLines().some((line) => line.level === 50 && /must differ.*the tokens in use are kept/.test(String(line.msg)))
          ? true
          : undefined,
      5000,
      'the refusal',
    );
    expect(await status('/metrics', 'metrics-token-after-000002')).toBe(200);
    expect(await status('/dashboard/', 'dashboard-token-after-00002')).toBe(200);
    expect(serve.stdout()).not.toMatch(/token-(before|after)|short/);
    expect(await serve.stop()).toBe(0);
  });

  it('names, in each error, the variable or the flag that gave the file it could not use', async () => {
    const one = makeCertificate('named');
    const secretFile = write('named-secrets.txt', `${OLD}\n`);
    const metricsFile = write('named-metrics.txt', 'metrics-token-named-000001\n');
    const apiKeyFile = write('named-api-key.txt', 'agency_live_N4medN4medN4medN4medN4medN4medN4med\n');
    const cert = write('named.crt', one.pem);
    const env = {
      PREQUAL_HOOKS_SECRET_FILE: secretFile,
      PREQUAL_HOOKS_METRICS_TOKEN_FILE: metricsFile,
      PREQUAL_HOOKS_DASHBOARD_TOKEN: TOKEN,
      PREQUAL_HOOKS_API_KEY_FILE: apiKeyFile,
      PREQUAL_HOOKS_TLS_CERT: cert,
      PREQUAL_HOOKS_TLS_KEY: one.key,
    };
    const serve = await startServe(['--port', '0', '--host', '127.0.0.1', '--db', join(tmp.dir, 'named.db')], env);
    const errors = () =>
      serve
        .logLines()
        .filter((line) => line.level === 50)
        .map((line) => String(line.msg));
    writeFileSync(secretFile, '\n');
    writeFileSync(metricsFile, `${TOKEN}\n`); // the same as the dashboard token, from its variable
    writeFileSync(apiKeyFile, '');
    writeFileSync(cert, 'garbage\n');
    serve.child.kill('SIGHUP');
    await waitFor(() => (errors().length >= 4 ? true : undefined), 5000, 'four errors');
    expect(errors().sort()).toEqual(
      [
        `SIGHUP: ${secretFile} (given by PREQUAL_HOOKS_SECRET_FILE) is empty: it must hold the secret; the secrets in use are kept`,
        `SIGHUP: PREQUAL_HOOKS_DASHBOARD_TOKEN and PREQUAL_HOOKS_METRICS_TOKEN_FILE (${metricsFile}) must differ: each token opens its own part, so one value cannot be both; the tokens in use are kept`,
        `SIGHUP: ${apiKeyFile} (given by PREQUAL_HOOKS_API_KEY_FILE) is empty: it must hold the secret; the API key in use is kept`,
        `SIGHUP: the TLS certificate ${cert} (given by PREQUAL_HOOKS_TLS_CERT) is not a PEM certificate (-----BEGIN CERTIFICATE-----); the certificate in use is kept`,
      ].sort(),
    );
    const agent = new Agent({ ca: [one.pem] });
    expect((await postOver(agent, serve.webhookUrl, OLD)).status).toBe(200);
    expect((await getOver(agent, `${serve.baseUrl}/metrics`, { Authorization: 'Bearer metrics-token-named-000001' })).status).toBe(200);
    agent.destroy();

    // A missing file, named the same way.
    execFileSync('rm', [secretFile]);
    serve.child.kill('SIGHUP');
    await waitFor(
      () =>
        errors().some((line) => line.startsWith(`SIGHUP: cannot read ${secretFile} (given by PREQUAL_HOOKS_SECRET_FILE): no such file`))
          ? true
          : undefined,
      5000,
      'the missing file',
    );
    expect(await serve.stop()).toBe(0);
    expect(serve.stdout() + serve.stderr()).not.toContain(TOKEN);
  });

  it('is not fatal without files to re-read', async () => {
    const serve = await startServe(['--port', '0', '--host', '127.0.0.1', '--db', join(tmp.dir, 'nohup.db'), '--secret', OLD]);
    serve.child.kill('SIGHUP');
    await waitFor(() => (logsWith(serve, 'SIGHUP: nothing to re-read').length > 0 ? true : undefined), 5000, 'the warning');
    expect((await fetch(`${serve.baseUrl}/healthz`)).status).toBe(200);
    expect(await serve.stop()).toBe(0);
  });
});

describe('files holding secrets that other users can read', () => {
  it('are warned of at start and at each SIGHUP by path, the option or variable that gave them and mode, never by content', async () => {
    const tls = makeCertificate('loose');
    const key = write('loose-tls.key', readFileSync(tls.key));
    const secretFile = write('loose-secret.txt', `${OLD}\n`);
    const dashboardFile = write('loose-dashboard.txt', `${TOKEN}\n`);
    const metricsFile = write('tight-metrics.txt', 'metrics-token-owner-only-01\n');
    const apiKeyFile = write('loose-api-key.txt', 'agency_live_L00seK3yL00seK3yL00seK3yL00seK3y\n');
    for (const [file, mode] of [
      [secretFile, 0o644],
      [dashboardFile, 0o640],
      [apiKeyFile, 0o604],
      [key, 0o644],
      [metricsFile, 0o600],
      [tls.cert, 0o644],
    ] as const)
      chmodSync(file, mode);
    const serve = await startServe(
      [
        '--port',
        '0',
        '--host',
        '127.0.0.1',
        '--db',
        join(tmp.dir, 'loose.db'),
        '--secret-file',
        secretFile,
        '--metrics-token-file',
        metricsFile,
        '--tls-cert',
        tls.cert,
        '--tls-key',
        key,
      ],
      { PREQUAL_HOOKS_DASHBOARD_TOKEN_FILE: dashboardFile, PREQUAL_HOOKS_API_KEY_FILE: apiKeyFile },
    );
    const warnings = () =>
      serve
        .logLines()
        .filter((line) => line.level === 40 && /can be read by other users/.test(String(line.msg)))
        .map((line) => String(line.msg));
    const expected = [
      `${secretFile} (given by --secret-file) can be read by other users (mode 644); it holds the webhook secrets: chmod 600 ${secretFile}`,
      `${dashboardFile} (given by PREQUAL_HOOKS_DASHBOARD_TOKEN_FILE) can be read by other users (mode 640); it holds the console token: chmod 600 ${dashboardFile}`,
      `${apiKeyFile} (given by PREQUAL_HOOKS_API_KEY_FILE) can be read by other users (mode 604); it holds the agency's API key: chmod 600 ${apiKeyFile}`,
      `${key} (given by --tls-key) can be read by other users (mode 644); it holds the TLS private key: chmod 600 ${key}`,
    ];
    await waitFor(() => (warnings().length >= 4 ? true : undefined), 5000, 'the warnings at start');
    expect(warnings().sort()).toEqual([...expected].sort());

    serve.child.kill('SIGHUP');
    await waitFor(() => (warnings().length >= 8 ? true : undefined), 5000, 'the warnings at reload');
    expect(warnings().slice(4).sort()).toEqual(expected.map((line) => `SIGHUP: ${line}`).sort());

    // Owner-only again: the next reload re-reads every file and warns of none.
    for (const file of [secretFile, dashboardFile, apiKeyFile, key]) chmodSync(file, 0o600);
    serve.child.kill('SIGHUP');
    await waitFor(
      () =>
        logsWith(serve, 'SIGHUP: TLS certificate and key re-read').length >= 2 && logsWith(serve, 'SIGHUP: tokens re-read').length >= 2
          ? true
          : undefined,
      5000,
      'the second reload',
    );
    expect(warnings()).toHaveLength(8);
    expect(await serve.stop()).toBe(0);
    for (const secret of [OLD, TOKEN, 'metrics-token-owner-only-01', 'L00seK3y', 'PRIVATE KEY'])
      expect(serve.stdout() + serve.stderr()).not.toContain(secret);
  });
});

describe('--trust-proxy', () => {
  it("logs the client's address from the last X-Forwarded-For entry only when asked", async () => {
    const forwarded = { 'x-forwarded-for': '203.0.113.9, 198.51.100.7' };
    for (const [args, client] of [
      [[], '127.0.0.1'],
      [['--trust-proxy'], '198.51.100.7'],
    ] as const) {
      const serve = await startServe([
        '--port',
        '0',
        '--host',
        '127.0.0.1',
        '--db',
        join(tmp.dir, `proxy${args.length}.db`),
        '--secret',
        OLD,
        ...args,
      ]);
      const { body, headers } = signedRequest(newEvent(), { secret: OLD });
      expect((await fetch(serve.webhookUrl, { method: 'POST', headers: { ...headers, ...forwarded }, body })).status).toBe(200);
      const line = await waitFor(() => serve.logLines().find((entry) => entry.msg === 'webhook'), 5000, 'the access log line');
      expect(line.client).toBe(client);
      expect(await serve.stop()).toBe(0);
    }
  });
});
