// The thread that deflates bodies ahead of a bulk load (body-deflater.ts): each request is a batch
// of bodies packed in one buffer, answered with their stored forms packed the same way, both
// moved between the threads rather than copied. The forms are storedBody's, so the bytes are
// exactly those the load's own thread would store.
import { parentPort } from 'node:worker_threads';
import { errorShape } from '../threads.js';
import { storedBody } from './bodies.js';
import type { DeflateAnswer, DeflateRequest, PackedBodies } from './body-deflater.js';

/** Each body's stored form, packed in one buffer with where each ends and its codec. */
function deflated(request: PackedBodies): PackedBodies {
  const bytes = new Uint8Array(request.bytes);
  const forms = [];
  let start = 0;
  let total = 0;
  for (const end of request.ends) {
    const form = storedBody(bytes.subarray(start, end));
    forms.push(form);
    total += form.bytes.byteLength;
    start = end;
  }
  const packed = new Uint8Array(new ArrayBuffer(total));
  const ends = new Uint32Array(forms.length);
  const codecs = new Uint8Array(forms.length);
  let at = 0;
  forms.forEach((form, i) => {
    packed.set(form.bytes, at);
    at += form.bytes.byteLength;
    ends[i] = at;
    codecs[i] = form.codec;
  });
  return { bytes: packed.buffer, ends, codecs };
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
