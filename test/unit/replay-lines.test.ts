// A stored body as one NDJSON line (src/replay/lines.ts), as `dump` writes it and replay reads it:
// every body comes back byte for byte, whatever it holds (LF, CR, nothing, invalid UTF-8, the
// escaped form itself), and an ordinary event is written as it is.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bodyLine, erasureLine, lineBody, readLine } from '../../src/replay/lines.js';
import { NdjsonStream, readSources } from '../../src/replay/sources.js';

/** The bodies replay reads from `text` given in chunks cut at `cuts`. */
async function replayed(text: Buffer, cuts: number[]): Promise<Buffer[]> {
  const points = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
  const chunks = [0, ...points, text.length].slice(1).map((end, i, all) => text.subarray(i === 0 ? 0 : all[i - 1], end));
  const bodies: Buffer[] = [];
  for await (const item of readSources([new NdjsonStream(chunks, 'stdin')])) if (item.ok && 'raw' in item) bodies.push(item.raw);
  return bodies;
}

const tricky = fc.oneof(
  fc.uint8Array({ maxLength: 64 }),
  fc.constantFrom(
    Buffer.from(''),
    Buffer.from('   \t'),
    Buffer.from('{"a":1}\r'),
    Buffer.from('{\n  "event": "x"\n}\n'),
    Buffer.from([0xff, 0xfe, 0x0a, 0x00]),
    Buffer.from('{"prequal-hooks:raw-base64":"e30="}'),
    // A body in the erasure line's form is a body still, never taken for an erasure.
    Buffer.from('{"prequal-hooks:erasure":{"candidate_id":"c1","erased_at":"2026-11-20T10:00:00.000Z"}}'),
  ),
);

describe('a body as a dump line', () => {
  it('writes an event that is one line as it is', () => {
    const event = Buffer.from('{"event":"candidate.added","timestamp":"2026-11-20T10:00:00Z","data":{"candidate_id":"c-1"}}');
    expect(bodyLine(event).equals(event)).toBe(true);
  });

  it('comes back byte for byte, through replay reading a stream cut anywhere', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(tricky, { minLength: 1, maxLength: 8 }), fc.array(fc.nat(), { maxLength: 6 }), async (bodies, cuts) => {
        const lines = bodies.map((b) => bodyLine(b));
        for (const [i, line] of lines.entries()) {
          expect(line.includes(0x0a)).toBe(false);
          expect(lineBody(line).equals(Buffer.from(bodies[i]!))).toBe(true);
        }
        const text = Buffer.concat(lines.flatMap((line) => [line, Buffer.from('\n')]));
        const read = await replayed(text, cuts);
        expect(read.map((b) => b.toString('hex'))).toEqual(bodies.map((b) => Buffer.from(b).toString('hex')));
      }),
      { numRuns: 200 },
    );
  });
});

describe('an erasure as a dump line', () => {
  it('reads back as the erasure it stands for, and a line of its form that holds none as an error', () => {
    const erasure = { candidateId: 'cand-1', erasedAt: '2026-11-20T10:00:00.000Z' };
    expect(erasureLine(erasure).toString()).toBe(
      '{"prequal-hooks:erasure":{"candidate_id":"cand-1","erased_at":"2026-11-20T10:00:00.000Z"}}',
    );
    expect(readLine(erasureLine(erasure))).toEqual({ erasure });
    for (const line of [
      '{"prequal-hooks:erasure":{"candidate_id":"","erased_at":"2026-11-20T10:00:00Z"}}',
      '{"prequal-hooks:erasure":{"candidate_id":"c","erased_at":"yesterday"}}',
      '{"prequal-hooks:erasure":{"candidate_id":"c","erased_at":"2026-11-20T10:00:00Z"},"event":"x"}',
      '{"prequal-hooks:erasure":',
    ])
      expect(readLine(Buffer.from(line))).toHaveProperty('invalid');
  });
});
