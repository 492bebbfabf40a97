import { createReadStream } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { createInterface } from 'node:readline';

/** What replay accepts: event objects, or paths of `.json` / `.ndjson` files and folders of them. */
export type ReplayInput = string | object;

export type SourceItem =
  | { ok: true; raw: Buffer; origin: string }
  | { ok: false; origin: string; message: string };

async function* fromFile(path: string): AsyncGenerator<SourceItem> {
  if (extname(path) === '.ndjson') {
    // Streamed line by line: memory stays flat whatever the file size.
    const lines = createInterface({ input: createReadStream(path), crlfDelay: Infinity });
    let n = 0;
    for await (const line of lines) {
      n++;
      if (line.trim() === '') continue;
      yield { ok: true, raw: Buffer.from(line, 'utf8'), origin: `${path}:${n}` };
    }
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
    for (const [i, item] of parsed.entries()) yield { ok: true, raw: Buffer.from(JSON.stringify(item)), origin: `${path}[${i}]` };
  } else {
    yield { ok: true, raw: bytes, origin: path };
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

/** Every event of the inputs, in the order given, as raw bytes. */
export async function* readSources(inputs: Iterable<ReplayInput> | ReplayInput): AsyncGenerator<SourceItem> {
  const list = typeof inputs === 'string' || !(Symbol.iterator in Object(inputs)) ? [inputs as ReplayInput] : [...(inputs as Iterable<ReplayInput>)];
  for (const input of list) {
    if (typeof input === 'string') yield* fromPath(input);
    else if (Array.isArray(input)) {
      for (const item of input) yield { ok: true, raw: Buffer.from(JSON.stringify(item)), origin: 'object' };
    } else yield { ok: true, raw: Buffer.from(JSON.stringify(input)), origin: 'object' };
  }
}
