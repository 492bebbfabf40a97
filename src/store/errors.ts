// The store's one error type, and how any engine's error is described in logs and 503s.
/** A fault of the store (unreachable, locked, full, read-only): the caller answers 503 and retries. */
export class StoreUnavailableError extends Error {
  /** Always `StoreUnavailableError`, to tell it apart from other errors. */
  override name = 'StoreUnavailableError';
  constructor(
    /** Why, as a code: `CLOSED` once the store is closed, `TIMEOUT`, or the engine's own (`SQLITE_BUSY`, a PostgreSQL SQLSTATE, `ECONNREFUSED`). */
    readonly code: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The engine's code (SQLITE_BUSY, ECONNREFUSED, 53100 …) for logs and the 503's details; never the data. */
export function describeStorageError(error: unknown): { code: string; message: string } {
  if (error instanceof StoreUnavailableError) return { code: error.code, message: error.message };
  const code = (error as { code?: unknown })?.code;
  return {
    code: typeof code === 'string' ? code : 'STORAGE_ERROR',
    message: error instanceof Error ? error.message : String(error),
  };
}
