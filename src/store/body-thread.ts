// The thread that deflates bodies ahead of a bulk load (body-deflater.ts): each request is a batch
// of bodies packed in one buffer, answered with their stored forms packed the same way, both
// moved between the threads rather than copied. The forms are storedBody's, so the bytes are
// exactly those the load's own thread would store.
import { parentPort } from 'node:worker_threads';
import { errorShape } from '../threads.js';
import { storedBody } from './bodies.js';
import { packed, type DeflateAnswer, type DeflateRequest, type PackedBodies } from './body-deflater.js';

/** Each body's stored form, packed as the request was (`packed`), with its codec. */
function deflated(request: PackedBodies): PackedBodies {
  const bytes = new Uint8Array(request.bytes);
  let start = 0;
  const forms = Array.from(request.ends, (end) => {
    const form = storedBody(bytes.subarray(start, end));
    start = end;
    return form;
  });
  return { ...packed(forms.map((form) => form.bytes)), codecs: Uint8Array.from(forms, (form) => form.codec) };
}

parentPort!.on('message', (request: DeflateRequest) => {
  let answer: DeflateAnswer;
  try {
    answer = { id: request.id, ok: true, bodies: deflated(request.bodies) };
  } catch (error) {
    answer = { id: request.id, ok: false, error: errorShape(error) };
  }
  parentPort!.postMessage(answer, answer.ok ? [answer.bodies.bytes, answer.bodies.ends.buffer, answer.bodies.codecs!.buffer] : []);
});
