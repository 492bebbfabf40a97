// `receiver.forAccount(id)` names an account of the registry: an unknown id throws (at once, from
// the routes the receiver keeps current) or rejects (before they were first read, or without a
// watch), and nothing is read or written for it; an account added through the receiver is known at once.
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openAccounts, UnknownAccountError } from '../../src/accounts/index.js';
import { createKeyFile, newKey } from '../../src/accounts/key-file.js';
import { createReceiver, type Receiver } from '../../src/receiver/create-receiver.js';
import { openStore } from '../../src/store/open.js';
import { sampleEvent } from '../../src/testing/index.js';

import { ENGINES } from '../support/engines.js';
import { tempDir } from '../support/servers.js';
import { sqlOn } from '../support/sql.js';
import { waitFor } from '../support/wait-for.js';

const SECRET = 'whsec_for-account-test-default-91d2';
const event = sampleEvent('campaign.created', { data: { campaign_id: 'camp-for-account' } });

describe.each(ENGINES)('receiver.forAccount on $name', (engine) => {
  const closing: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const close of closing.splice(0).reverse()) await close();
  });

  async function fresh(accounts: 'watched' | false) {
    const { database, cleanup } = await engine.fresh();
    const keys = tempDir('prequal-hooks-keys-');
    const keyFile = join(keys.dir, 'accounts-key');
    createKeyFile(keyFile, newKey());
    closing.push(cleanup, keys.cleanup);
    const receiver = createReceiver({ database, secret: SECRET, accounts: accounts === false ? false : { keyFile, everyMs: 50 } });
    closing.push(() => receiver.close());
    await receiver.ready();
    const stored = async () => await sqlOn(database).query<{ account: string }>('SELECT account FROM inbox ORDER BY inbox_id');
    return { database, keyFile, receiver, stored };
  }

  /** Once the receiver has read the registry, an unknown id throws at once. */
  const thrownFor = (receiver: Receiver, account: string) =>
    waitFor(
      () => {
        try {
          receiver.forAccount(account);
          return undefined;
        } catch (error) {
          return error;
        }
      },
      5000,
      `forAccount(${account}) to throw once the registry is read`,
    );

  it('throws UnknownAccountError for an id the registry does not hold, and writes nothing for it', async () => {
    const { receiver, stored } = await fresh('watched');
    const error = await thrownFor(receiver, 'typo');
    expect(error).toBeInstanceOf(UnknownAccountError);
    expect((error as Error).message).toBe('no account "typo" in the registry (prequal-hooks accounts list shows them)');
    expect(() => receiver.forAccount('default')).not.toThrow();
    expect(await stored()).toEqual([]);
  });

  it('knows an account added through the receiver at once, and forgets one removed through it', async () => {
    const { receiver, stored } = await fresh('watched');
    await thrownFor(receiver, 'acme');
    const accounts = (await receiver.accounts())!;
    await accounts.add({ account: 'acme', secret: 'whsec_for-account-test-acme-0c3e' });
    await receiver.forAccount('acme').replay([event]);
    expect(await stored()).toEqual([{ account: 'acme' }]);
    await accounts.remove('acme', { reason: 'test' });
    expect(() => receiver.forAccount('acme')).toThrow(UnknownAccountError);
  });

  it('without a watch of the registry (accounts: false), the members reject for an unknown id and serve a registered one', async () => {
    const { database, keyFile, receiver, stored } = await fresh(false);
    const typo = receiver.forAccount('typo');
    await expect(typo.replay([event])).rejects.toBeInstanceOf(UnknownAccountError);
    await expect(typo.counts()).rejects.toBeInstanceOf(UnknownAccountError);
    await expect(typo.query.listCampaigns()).rejects.toBeInstanceOf(UnknownAccountError);
    await expect(typo.exportCandidate('cand-1')).rejects.toBeInstanceOf(UnknownAccountError);
    expect(await stored()).toEqual([]);
    const store = await openStore(database);
    try {
      await openAccounts(store, { keyFile }).add({ account: 'acme', secret: 'whsec_for-account-test-acme-0c3e' });
    } finally {
      await store.close();
    }
    await receiver.forAccount('acme').replay([event]);
    expect(await stored()).toEqual([{ account: 'acme' }]);
  });
});
