// A server of a test's own that speaks Redis's protocol (RESP) as a misbehaving Redis would: each
// command answered by `answer` (a raw RESP reply, or none), parsed from what node-redis sends. For
// what a real redis-server cannot be made to do, such as answering XADD with a megabyte-long error,
// or never answering it.
import { createServer, type Socket } from 'node:net';

/** The commands of `buffer` that are complete (arrays of bulk strings), and the bytes left over. */
function commandsIn(buffer: Buffer): { commands: string[][]; rest: Buffer } {
  const commands: string[][] = [];
  let at = 0;
  const line = (from: number): { text: string; next: number } | undefined => {
    const end = buffer.indexOf('\r\n', from);
    return end === -1 ? undefined : { text: buffer.toString('latin1', from, end), next: end + 2 };
  };
  for (;;) {
    const head = line(at);
    if (head === undefined || !head.text.startsWith('*')) break;
    const args: string[] = [];
    let next = head.next;
    for (let i = 0; i < Number(head.text.slice(1)); i++) {
      const size = line(next);
      if (size === undefined) return { commands, rest: buffer.subarray(at) };
      const length = Number(size.text.slice(1));
      if (buffer.length < size.next + length + 2) return { commands, rest: buffer.subarray(at) };
      args.push(buffer.toString('utf8', size.next, size.next + length));
      next = size.next + length + 2;
    }
    commands.push(args);
    at = next;
  }
  return { commands, rest: buffer.subarray(at) };
}

/** Listens on loopback; each command is answered with `answer(command)`, a raw RESP reply (undefined: never). */
export async function startRespServer(
  answer: (command: string[]) => string | undefined,
): Promise<{ url: string; open(): number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    let pending: Buffer = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      const { commands, rest } = commandsIn(Buffer.concat([pending, chunk]));
      pending = rest;
      for (const command of commands) {
        const reply = answer(command);
        if (reply !== undefined) socket.write(reply);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `redis://127.0.0.1:${port}`,
    open: () => sockets.size,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
