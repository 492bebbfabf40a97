// One signed webhook POSTed the way the service sends it, timed: what the benchmarks that drive
// serve with single requests (flood, operator-reads, destinations) send.

/** A request's answer: its status (0 when it failed or timed out), how long it took (ms), and when it ended (performance.now()). */
export interface TimedAnswer {
  status: number;
  ms: number;
  endedAt: number;
}

/** POSTs `body` with its `x-service-signature`; the whole answer is read before it resolves. */
export async function postSigned(url: string, body: string, signature: string, timeoutMs: number): Promise<TimedAnswer> {
  const started = performance.now();
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-service-signature': signature },
      body,
      signal: AbortSignal.timeout(timeoutMs),
    });
    await response.arrayBuffer();
    const endedAt = performance.now();
    return { status: response.status, ms: endedAt - started, endedAt };
  } catch {
    const endedAt = performance.now();
    return { status: 0, ms: endedAt - started, endedAt };
  }
}
