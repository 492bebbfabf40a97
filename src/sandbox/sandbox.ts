/** Options of `createSandbox`; every one has a documented default. */
export interface SandboxOptions {
  port?: number;
  host?: string;
}

export interface Sandbox {
  url: string;
  close(): Promise<void>;
}

export async function createSandbox(_options: SandboxOptions = {}): Promise<Sandbox> {
  throw new Error('not implemented yet');
}
