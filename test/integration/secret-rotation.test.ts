// receiver.setSecrets: a rotation without restart, for applications that hold their own receiver.
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logging.js';
import { createReceiver } from '../../src/receiver/create-receiver.js';
import { secretFingerprint } from '../../src/signature.js';
import { sampleEvent, signedRequest } from '../../src/testing/index.js';

const OLD = 'whsec_rotation_old_7d2c1a';
const NEW = 'whsec_rotation_new_e93b40';

describe('receiver.setSecrets', () => {
  it('swaps the secrets for the next requests, says which one verified, and refuses an empty set keeping the current one', async () => {
    const receiver = createReceiver({ database: ':memory:', secret: OLD, logger: createLogger({ level: 'silent' }) });
    let n = 0;
    const send = (secret: string) => {
      const request = signedRequest(sampleEvent('candidate.added', { data: { candidate_id: `c-${++n}` } }), { secret });
      return receiver.receive({ rawBody: request.body, headers: request.headers });
    };
    expect((await send(OLD)).secretFingerprint).toBe(secretFingerprint(OLD));
    expect((await send(NEW)).answer.status).toBe(401);

    receiver.setSecrets([OLD, NEW]);
    expect((await send(OLD)).secretFingerprint).toBe(secretFingerprint(OLD));
    expect((await send(NEW)).secretFingerprint).toBe(secretFingerprint(NEW));

    receiver.setSecrets([NEW]);
    expect((await send(OLD)).answer.status).toBe(401);
    expect(() => receiver.setSecrets([])).toThrow(/No webhook secret is configured/);
    expect(() => receiver.setSecrets([''])).toThrow(/No webhook secret is configured/);
    const kept = await send(NEW);
    expect(kept.answer.status).toBe(200);
    expect(kept.secretFingerprint).toBe(secretFingerprint(NEW));
    await receiver.close();
  });
});
