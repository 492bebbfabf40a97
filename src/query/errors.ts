/** An invalid query parameter, named like the service's 400 VALIDATION_ERROR. */
export class QueryParameterError extends Error {
  override name = 'QueryParameterError';
  readonly code = 'VALIDATION_ERROR';
  constructor(
    readonly parameter: string,
    message: string,
  ) {
    super(`${parameter}: ${message}`);
  }
  /** The service's error envelope, for APIs that expose these queries over HTTP. */
  toJSON() {
    return { error: { code: this.code, message: this.message, details: { [this.parameter]: this.message } } };
  }
}
