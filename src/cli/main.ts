#!/usr/bin/env node
// prequal-hooks, the process: run.ts on this process's arguments, streams and environment, its
// result the exit code.
import { run } from './run.js';

// A reader that stops early (`prequal-hooks inspect | head`) is not an error worth a stack trace.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
  process.exit(process.exitCode ?? 0);
});

process.exitCode = await run(process.argv.slice(2), {
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
});
