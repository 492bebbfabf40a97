// The errors of the accounts registry: each says what to do, never a secret.

/** The accounts key is missing, unreadable, or not the one the registry's secrets are under. */
export class AccountsKeyError extends Error {
  override name = 'AccountsKeyError';
}

/** No account has this id in the registry. */
export class UnknownAccountError extends Error {
  override name = 'UnknownAccountError';
  constructor(readonly account: string) {
    super(`no account "${account}" in the registry (prequal-hooks accounts list shows them)`);
  }
}

/** A request the registry refuses as given: a bad id, the reserved default account, an id taken. */
export class AccountRequestError extends Error {
  override name = 'AccountRequestError';
}
