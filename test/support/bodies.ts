// A stored body as received: the inbox keeps bodies compact and identities as bytes
// (src/store/bodies.ts, src/store/identities.ts), so a test that reads the table selects `raw,
// codec` and decodes them as the store does.
import { bodyOf } from '../../src/store/bodies.js';
import { identityText } from '../../src/store/identities.js';

export const received = (row: { raw: Uint8Array; codec: number | null }): Buffer => bodyOf(row.codec, row.raw);

/** An inbox row read with `SELECT *`, its body as received and its identity in hex, as the store reads them. */
export const asStoreReads = <T extends Record<string, any>>(row: T): T => ({
  ...row,
  raw: received(row as unknown as { raw: Uint8Array; codec: number | null }),
  identity: identityText(row.identity),
});
