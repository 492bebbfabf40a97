// An answer's body, read up to a limit: a service (or whatever answers in its place) could
// otherwise stream gigabytes into memory.

/** Default limit of an answer's body: a page of 100 candidates is about 100 KB. */
export const DEFAULT_MAX_RESPONSE_BYTES = 8 * 1024 * 1024;

export type BodyReading = { ok: true; text: string } | { ok: false; limit: number };

/** The body as text, or `ok: false` as soon as it is known to pass `limit` bytes (the rest is not read). */
export async function readBodyWithin(response: Response, limit: number): Promise<BodyReading> {
  const declared = Number(response.headers.get('content-length') ?? Number.NaN);
  if (declared > limit) {
    await response.body?.cancel().catch(() => {});
    return { ok: false, limit };
  }
  if (response.body === null) return { ok: true, text: '' };
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      return { ok: false, limit };
    }
    chunks.push(value);
  }
  // As Response.text() decodes: UTF-8, a leading BOM dropped, bad bytes as U+FFFD.
  return { ok: true, text: new TextDecoder().decode(Buffer.concat(chunks, size)) };
}
