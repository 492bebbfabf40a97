/** A destination asked for wrongly (a URL, a filter, a schedule, an id): the request changed nothing. */
export class DestinationRequestError extends Error {
  override name = 'DestinationRequestError';
}

/** The most of an error's text a delivery stores (`last_error`) and logs, in UTF-8 bytes. */
const MAX_ERROR_BYTES = 1024;

/**
 * An error's text as stored and logged: cut to MAX_ERROR_BYTES, saying how much more there was. A
 * destination's own words (a Redis error reply) can be a megabyte, and would then be a megabyte in
 * each log line, in the database and on the console's page.
 */
export function errorText(message: string): string {
  const bytes = Buffer.from(message, 'utf8');
  if (bytes.length <= MAX_ERROR_BYTES) return message;
  const note = ` … (${bytes.length} bytes, cut)`;
  let end = MAX_ERROR_BYTES - Buffer.byteLength(note);
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--; // not inside a character
  return `${bytes.subarray(0, end).toString('utf8')}${note}`;
}
