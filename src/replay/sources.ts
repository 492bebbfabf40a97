import { createReadStream } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { readCanonicalJson } from '../events/index.js';
import { isBlank, readLine, type CopiedErasure } from './lines.js';

/** What replay accepts: event objects, or paths of `.json` / `.ndjson` files and folders of them. */
export type ReplayInput = string | object;

/** NDJSON read from a stream (`replay -`: standard input, such as `dump`'s output), line by line as an .ndjson file is. */
export class NdjsonStream {
  constructor(
    readonly stream: AsyncIterable<Buffer | string> | Iterable<Buffer | string>,
    readonly origin: string,
  ) {}
}

/** A body read, an erasure read (a dump's erasure line), or an input that could not be read. */
export type SourceItem =
  | { ok: true; raw: Buffer; origin: string }
  | { ok: true; erasure: CopiedErasure; origin: string }
  | { ok: false; origin: string; message: string };

async function* fromFile(path: string): AsyncGenerator<SourceItem> {
  if (extname(path) === '.ndjson') {
    yield* ndjsonLines(createReadStream(path) as AsyncIterable<Buffer>, path);
    return;
  }
  const bytes = await readFile(path);
  let parsed: unknown;
  try {
    parsed = JSON.parse(bytes.toString('utf8'));
  } catch {
    yield { ok: true, raw: bytes, origin: path }; // kept as a dead letter, like a bad HTTP body
    return;
  }
  if (Array.isArray(parsed)) {
    // Each element's own bytes, not a re-serialisation: JSON.stringify would change values it
    // cannot write (1e400 becomes null) and throws on deep ones.
    for (const [i, raw] of arrayElements(bytes).entries()) yield { ok: true, raw, origin: `${path}[${i}]` };
  } else {
    yield { ok: true, raw: bytes, origin: path };
  }
}

/**
 * The lines of an NDJSON file or stream, streamed (memory stays flat whatever the file size), each
 * as its exact bytes: split at LF (a CR before it is dropped), never decoded, so that a line that
 * is not valid UTF-8 is kept as it was written, and a line made only of blanks is skipped. A line
 * in dump's escaped form (lines.ts) is the body it escapes; one in its erasure form, an erasure.
 */
async function* ndjsonLines(chunks: AsyncIterable<Buffer | string> | Iterable<Buffer | string>, path: string): AsyncGenerator<SourceItem> {
  let n = 0;
  // The start of a line that goes on in the next chunk (a line may span many).
  let pieces: Buffer[] = [];
  const line = (tail: Buffer): SourceItem | undefined => {
    n++;
    let bytes = tail;
    if (pieces.length > 0) {
      bytes = Buffer.concat([...pieces, tail]);
      pieces = [];
    }
    if (bytes[bytes.length - 1] === CR) bytes = bytes.subarray(0, -1);
    if (isBlank(bytes)) return undefined;
    const origin = `${path}:${n}`;
    const read = readLine(bytes);
    if ('invalid' in read) return { ok: false, origin, message: read.invalid };
    return 'erasure' in read ? { ok: true, erasure: read.erasure, origin } : { ok: true, raw: read.body, origin };
  };
  for await (const text of chunks) {
    const chunk = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
    let start = 0;
    for (let end = chunk.indexOf(LF); end !== -1; start = end + 1, end = chunk.indexOf(LF, start)) {
      const item = line(chunk.subarray(start, end));
      if (item !== undefined) yield item;
    }
    if (start < chunk.length) pieces.push(chunk.subarray(start));
  }
  if (pieces.length > 0) {
    const item = line(Buffer.alloc(0));
    if (item !== undefined) yield item;
  }
}

async function* fromPath(path: string): AsyncGenerator<SourceItem> {
  let info;
  try {
    info = await stat(path);
  } catch (error) {
    yield { ok: false, origin: path, message: (error as Error).message };
    return;
  }
  if (info.isDirectory()) {
    const entries = (await readdir(path)).sort();
    for (const entry of entries) {
      const child = join(path, entry);
      const childInfo = await stat(child).catch(() => null);
      if (childInfo?.isDirectory() || ['.json', '.ndjson'].includes(extname(entry))) yield* fromPath(child);
    }
    return;
  }
  try {
    yield* fromFile(path);
  } catch (error) {
    yield { ok: false, origin: path, message: (error as Error).message };
  }
}

const [TAB, LF, CR, SPACE, QUOTE, COMMA, BACKSLASH] = [0x09, 0x0a, 0x0d, 0x20, 0x22, 0x2c, 0x5c];
const [OPEN_ARRAY, CLOSE_ARRAY, OPEN_OBJECT, CLOSE_OBJECT] = [0x5b, 0x5d, 0x7b, 0x7d];

/**
 * The exact bytes of each element of a JSON array text that JSON.parse already accepted, found
 * without recursion. Structural characters are ASCII and never occur inside a UTF-8 sequence,
 * so scanning bytes is exact.
 */
function arrayElements(bytes: Buffer): Buffer[] {
  const elements: Buffer[] = [];
  let depth = 0;
  let inString = false;
  let start = -1; // first byte of the current element, -1 between elements
  let end = -1; // one past its last byte
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i]!;
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) {
        inString = false;
        end = i + 1;
      }
      continue;
    }
    if (c === SPACE || c === TAB || c === LF || c === CR) continue;
    if (depth === 0) {
      depth = 1; // the outer `[`
      continue;
    }
    if (depth === 1 && (c === COMMA || c === CLOSE_ARRAY)) {
      if (start >= 0) elements.push(bytes.subarray(start, end));
      start = -1;
      if (c === CLOSE_ARRAY) break;
      continue;
    }
    if (depth === 1 && start < 0) start = i;
    if (c === QUOTE) inString = true;
    else if (c === OPEN_ARRAY || c === OPEN_OBJECT) depth++;
    else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) depth--;
    end = i + 1;
  }
  return elements;
}

/** An object given to replay, as JSON.stringify writes it; past its depth, as canonical JSON. */
function objectItem(item: unknown): SourceItem {
  try {
    return { ok: true, raw: Buffer.from(JSON.stringify(item)), origin: 'object' };
  } catch (error) {
    if (!(error instanceof RangeError)) return { ok: false, origin: 'object', message: (error as Error).message };
  }
  const reading = readCanonicalJson(item);
  return reading.ok
    ? { ok: true, raw: Buffer.from(reading.canonical), origin: 'object' }
    : { ok: false, origin: 'object', message: `${reading.issue.path}: ${reading.issue.message}` };
}

/** Every event of the inputs, in the order given, as raw bytes. */
export async function* readSources(inputs: Iterable<ReplayInput> | ReplayInput): AsyncGenerator<SourceItem> {
  const list =
    typeof inputs === 'string' || !(Symbol.iterator in Object(inputs)) ? [inputs as ReplayInput] : [...(inputs as Iterable<ReplayInput>)];
  for (const input of list) {
    if (typeof input === 'string') yield* fromPath(input);
    else if (input instanceof NdjsonStream) yield* ndjsonLines(input.stream, input.origin);
    else if (Array.isArray(input)) {
      for (const item of input) yield objectItem(item);
    } else yield objectItem(input);
  }
}
