// serve's HTTPS certificate and key, read and checked as a pair at start and at each SIGHUP, so
// that a wrong file is one clear line (which file, given by what, what is wrong) rather than
// OpenSSL's codes.
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { CommandError, readFailure } from './args.js';

export interface TlsPair {
  cert: Buffer;
  key: Buffer;
}

/** The paths of the pair, and the option or variable that gave each (`--tls-key`, `PREQUAL_HOOKS_TLS_KEY`). */
export interface TlsFiles {
  cert: string;
  key: string;
  from?: { cert: string; key: string };
}

function readPem(path: string, what: string): Buffer {
  try {
    return readFileSync(path);
  } catch (error) {
    throw new CommandError(`cannot read the TLS ${what}: ${readFailure(error)}`);
  }
}

/** The certificate chain and private key at these paths, checked to be PEM and to match. */
export function readTlsPair(files: TlsFiles): TlsPair {
  const named = (which: 'cert' | 'key') => `${files[which]}${files.from === undefined ? '' : ` (given by ${files.from[which]})`}`;
  const cert = readPem(files.cert, `certificate ${named('cert')}`);
  const key = readPem(files.key, `key ${named('key')}`);
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(cert);
  } catch {
    throw new CommandError(`the TLS certificate ${named('cert')} is not a PEM certificate (-----BEGIN CERTIFICATE-----)`);
  }
  let privateKey: ReturnType<typeof createPrivateKey>;
  try {
    privateKey = createPrivateKey(key);
  } catch {
    throw new CommandError(`the TLS key ${named('key')} is not a PEM private key (or it is encrypted: give it without a passphrase)`);
  }
  if (!certificate.checkPrivateKey(privateKey))
    throw new CommandError(`the TLS key ${named('key')} does not match the certificate ${named('cert')}`);
  return { cert, key };
}
