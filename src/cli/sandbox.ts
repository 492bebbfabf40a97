import type { CommandIo } from './args.js';

export async function sandbox(_argv: string[], io: CommandIo): Promise<number> {
  io.stderr.write('prequal-hooks sandbox: not implemented yet\n');
  return 1;
}
