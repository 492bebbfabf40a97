// The one POST of `send`, over node:http or node:https: unlike fetch, node:https takes extra CA
// certificates per request (`--ca`), and its TLS errors carry the certificate's problem as a code.
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import * as tls from 'node:tls';
import type { SignedRequest } from '../testing/signed-request.js';
import { CommandError, readFailure } from './args.js';

export interface Answer {
  status: number;
  statusText: string;
  text: string;
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** The CA certificates to trust with a `--ca` file: Node's own and every certificate of the file, each checked readable here. */
export function trustedWith(path: string, from: string): string[] {
  let pem: string;
  try {
    pem = readFileSync(path, 'utf8');
  } catch (error) {
    throw new CommandError(`cannot read ${path} (given by ${from}): ${readFailure(error)}`);
  }
  const certificates = pem.match(PEM_CERTIFICATE) ?? [];
  if (certificates.length === 0)
    throw new CommandError(`${path} (given by ${from}) holds no PEM certificate (-----BEGIN CERTIFICATE-----)`);
  for (const certificate of certificates) {
    try {
      new X509Certificate(certificate);
    } catch (error) {
      throw new CommandError(`${path} (given by ${from}) holds a certificate that cannot be read: ${(error as Error).message}`);
    }
  }
  return [...nodeCertificates(), ...certificates];
}

/** What Node trusts by default: giving `ca` replaces it, so it is given again beside the file's. */
function nodeCertificates(): string[] {
  const listing = (tls as { getCACertificates?: (type: string) => string[] }).getCACertificates;
  if (listing !== undefined) return listing('default'); // Node 22.15 and later: bundled, extra, system
  const extra = process.env.NODE_EXTRA_CA_CERTS;
  let extraPem = '';
  try {
    if (extra !== undefined && extra !== '') extraPem = readFileSync(extra, 'utf8');
  } catch {
    // Node itself warned at start that it could not read it
  }
  return [...tls.rootCertificates, ...(extraPem.match(PEM_CERTIFICATE) ?? [])];
}

/** POSTs the request and reads the whole answer; rejects with a TimeoutError past `timeoutMs`. */
export function post(url: URL, request: SignedRequest, timeoutMs: number, ca?: string[]): Promise<Answer> {
  const options = {
    method: 'POST',
    headers: { ...request.headers, 'content-length': String(request.body.byteLength) },
    agent: false as const, // one connection, closed after: nothing keeps the command alive
    ...(ca !== undefined && { ca }),
  };
  return new Promise<Answer>((resolve, reject) => {
    let timedOut = false;
    const timer = setTimeout(() => ((timedOut = true), sent.destroy()), timeoutMs);
    // Whatever destroying the request makes the stream say, a timeout is reported as one.
    const fail = (error: Error) => (
      clearTimeout(timer),
      reject(timedOut ? Object.assign(new Error(`no answer within ${timeoutMs} ms`), { name: 'TimeoutError' }) : error)
    );
    const answered = (response: IncomingMessage) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', fail);
      response.on('close', () => response.complete || fail(new Error('the connection closed before the whole answer')));
      response.on('end', () => {
        clearTimeout(timer);
        resolve({
          status: response.statusCode ?? 0,
          statusText: response.statusMessage ?? '',
          text: Buffer.concat(chunks).toString('utf8'),
        });
      });
    };
    const sent = url.protocol === 'https:' ? httpsRequest(url, options, answered) : httpRequest(url, options, answered);
    sent.on('error', fail);
    sent.end(request.body);
  });
}

// Why a certificate was refused, by the code OpenSSL (or Node's host check) gives it.
const UNTRUSTED = new Set([
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'CERT_SIGNATURE_FAILURE',
]);

/**
 * The sentence for a refused server certificate, or undefined for any other failure. The code is
 * on the error (node:https) or on its cause (fetch).
 */
export function certificateProblem(error: unknown, url: URL): string | undefined {
  const withCode = [error, (error as { cause?: unknown } | undefined)?.cause].find(
    (e) => typeof (e as { code?: unknown } | undefined)?.code === 'string',
  ) as (Error & { code: string }) | undefined;
  if (withCode === undefined) return undefined;
  const { code } = withCode;
  if (!UNTRUSTED.has(code) && !code.startsWith('CERT_') && code !== 'ERR_TLS_CERT_ALTNAME_INVALID') return undefined;
  const why = `the certificate of ${url.host} is not trusted: ${withCode.message} (${code})`;
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID')
    return `${why}. It was issued for other names: use one of them in --url, or have the receiver serve a certificate for ${url.hostname}`;
  if (code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID')
    return `${why}. Check the receiver's certificate dates (and this machine's clock)`;
  return `${why}. If it comes from a private CA (or is self-signed), give the CA's certificate (or that one), PEM, with --ca <file> or NODE_EXTRA_CA_CERTS=<file>`;
}
