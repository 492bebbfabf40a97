// serve's HTTPS certificate and key, read and checked as a pair at start and at each SIGHUP, so
// that a wrong file is one clear line (which file, what is wrong) rather than OpenSSL's codes.
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { CommandError, readFailure } from './args.js';

export interface TlsPair {
  cert: Buffer;
  key: Buffer;
}

function readPem(path: string, what: string): Buffer {
  try {
    return readFileSync(path);
  } catch (error) {
    throw new CommandError(`cannot read the TLS ${what} ${path}: ${readFailure(error)}`);
  }
}

/** The certificate chain and private key at these paths, checked to be PEM and to match. */
export function readTlsPair(files: { cert: string; key: string }): TlsPair {
  const cert = readPem(files.cert, 'certificate');
  const key = readPem(files.key, 'key');
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(cert);
  } catch {
    throw new CommandError(`the TLS certificate ${files.cert} is not a PEM certificate (-----BEGIN CERTIFICATE-----)`);
  }
  let privateKey: ReturnType<typeof createPrivateKey>;
  try {
    privateKey = createPrivateKey(key);
  } catch {
    throw new CommandError(`the TLS key ${files.key} is not a PEM private key (or it is encrypted: give it without a passphrase)`);
  }
  if (!certificate.checkPrivateKey(privateKey)) throw new CommandError(`the TLS key ${files.key} does not match the certificate ${files.cert}`);
  return { cert, key };
}
