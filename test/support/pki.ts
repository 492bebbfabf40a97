// A private CA and the certificates it signs, made with openssl in a folder of the test's own (as
// an agency's own PKI would make them): for servers that speak TLS and clients that prove who they are.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

export interface TestPki {
  /** A file of the folder. */
  path(name: string): string;
  /** The CA's certificate (`ca.crt`). */
  ca: string;
  /** `<name>.crt` and `<name>.key`, signed by the CA with the extension lines given (`subjectAltName=IP:127.0.0.1`). */
  sign(name: string, extensions: string): { cert: string; key: string };
}

/** A CA named `subject` in `dir`, with `openssl` (a path, or the name on PATH). */
export function createTestPki(dir: string, subject: string, openssl = 'openssl'): TestPki {
  const run = (args: string[]) => execFileSync(openssl, args, { stdio: 'ignore', cwd: dir });
  const path = (name: string) => join(dir, name);
  run([
    'req',
    '-x509',
    ...EC,
    '-keyout',
    'ca.key',
    '-out',
    'ca.crt',
    '-days',
    '2',
    '-subj',
    `/CN=${subject}`,
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  return {
    path,
    ca: path('ca.crt'),
    sign(name, extensions) {
      writeFileSync(path(`${name}.ext`), `${extensions}\nbasicConstraints=CA:FALSE\n`);
      run(['req', ...EC, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${name}`]);
      run([
        'x509',
        '-req',
        '-in',
        `${name}.csr`,
        '-CA',
        'ca.crt',
        '-CAkey',
        'ca.key',
        '-CAcreateserial',
        '-out',
        `${name}.crt`,
        '-days',
        '2',
        '-extfile',
        `${name}.ext`,
      ]);
      return { cert: path(`${name}.crt`), key: path(`${name}.key`) };
    },
  };
}
