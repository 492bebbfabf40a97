/** A destination asked for wrongly (a URL, a filter, a schedule, an id): the request changed nothing. */
export class DestinationRequestError extends Error {
  override name = 'DestinationRequestError';
}
