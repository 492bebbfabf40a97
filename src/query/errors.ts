/** An invalid query parameter, named like the service's 400 VALIDATION_ERROR. */
export class QueryParameterError extends Error {
  /** Always `QueryParameterError`, to tell it apart from other errors. */
  override name = 'QueryParameterError';
  /** Always `VALIDATION_ERROR`, the service's code for the same refusal. */
  readonly code = 'VALIDATION_ERROR';
  constructor(
    /** The parameter refused, e.g. `per_page`. */
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
