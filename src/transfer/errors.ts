/** A copy or a dump refused or failed for a reason its user can act on (exit 1): nothing was written. */
export class TransferError extends Error {
  /** Always `TransferError`, to tell it apart from other errors. */
  override name = 'TransferError';
}
