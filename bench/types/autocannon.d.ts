// autocannon ships no types and @types/autocannon is not installed: just what the bench uses.
declare module 'autocannon' {
  import type { IncomingHttpHeaders } from 'node:http';

  namespace autocannon {
    interface Request {
      method?: string;
      path?: string;
      headers?: Record<string, string>;
      body?: string | Buffer;
    }

    interface RequestStep extends Request {
      /** Called before each request; returns the request to send. `context`: the connection's, until its answer. */
      setupRequest?: (request: Request, context: Record<string, unknown>) => Request;
      onResponse?: (status: number, body: string, context: Record<string, unknown>, headers: IncomingHttpHeaders) => void;
    }

    interface Options {
      url: string;
      connections?: number;
      /** Seconds. */
      duration?: number;
      /** Requests in all, instead of a duration. */
      amount?: number;
      pipelining?: number;
      /** Seconds. */
      timeout?: number;
      requests?: RequestStep[];
    }

    interface Histogram {
      average: number;
      p50: number;
      p99: number;
      max: number;
    }

    interface Result {
      /** Seconds the run lasted. */
      duration: number;
      latency: Histogram;
      requests: Histogram & { total: number };
      errors: number;
      timeouts: number;
      non2xx: number;
      '2xx': number;
    }
  }

  function autocannon(options: autocannon.Options, callback: (error: Error | null, result: autocannon.Result) => void): unknown;

  export = autocannon;
}
