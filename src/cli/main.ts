#!/usr/bin/env node
// prequal-hooks: one file per command; this one only routes.
const USAGE = `Usage: prequal-hooks <command> [options]

Commands:
  serve          run the standalone webhook receiver
  help           show this help

Run "prequal-hooks <command> --help" for a command's options.`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (command === 'serve') {
    process.stderr.write('prequal-hooks serve: the receiver is not built yet in this version.\n');
    return 1;
  }
  process.stderr.write(`prequal-hooks: unknown command "${command}". Run "prequal-hooks --help".\n`);
  void rest;
  return 2;
}

process.exitCode = await main(process.argv.slice(2));
