// The errors of the accounts registry: each says what to do, never a secret.

/** The accounts key is missing, unreadable, or not the one the registry's secrets are under. */
export class AccountsKeyError extends Error {
  /** Always `AccountsKeyError`, to tell it apart from other errors. */
  override name = 'AccountsKeyError';
}

/** No account has this id in the registry. */
export class UnknownAccountError extends Error {
  /** Always `UnknownAccountError`, to tell it apart from other errors. */
  override name = 'UnknownAccountError';
  constructor(
    /** The account id that was asked for. */
    readonly account: string,
  ) {
    super(`no account "${account}" in the registry (prequal-hooks accounts list shows them)`);
  }
}

/** A request the registry refuses as given: a bad id, the reserved default account, an id taken. */
export class AccountRequestError extends Error {
  /** Always `AccountRequestError`, to tell it apart from other errors. */
  override name = 'AccountRequestError';
}
