// A stored body as received: the inbox keeps bodies compact (src/store/bodies.ts), so a test that
// reads the table selects `raw, codec` and decodes them as the store does.
import { bodyOf } from '../../src/store/bodies.js';

export const received = (row: { raw: Uint8Array; codec: number | null }): Buffer => bodyOf(row.codec, row.raw);
