// Reading a text/event-stream body as a client does (GET /changes with Accept: text/event-stream).

import type { ChangeRead } from './tables.js';

/** A change as the feed sends it, as JSON: the same fields as a change read from the table. */
export type WireChange = ChangeRead;

/** The events of a text/event-stream body as they come: `id` and the raw `data` (comments and events without data skipped). */
export async function* serverSentEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<{ id: string | undefined; data: string }> {
  const decoder = new TextDecoder();
  let buffered = '';
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    buffered += decoder.decode(chunk, { stream: true });
    let end: number;
    while ((end = buffered.indexOf('\n\n')) !== -1) {
      const lines = buffered.slice(0, end).split('\n');
      buffered = buffered.slice(end + 2);
      const field = (name: string) => lines.find((line) => line.startsWith(`${name}: `))?.slice(name.length + 2);
      const data = field('data');
      if (data !== undefined) yield { id: field('id'), data };
    }
  }
}

/** The changes of a feed's event stream as they come: `id` and the change. */
export async function* serverSentChanges(body: ReadableStream<Uint8Array>): AsyncGenerator<{ id: string | undefined; data: WireChange }> {
  for await (const { id, data } of serverSentEvents(body)) yield { id, data: JSON.parse(data) as WireChange };
}
