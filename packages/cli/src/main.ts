#!/usr/bin/env node
import { runCli } from './program.ts';

// A reader that stops early (`lifeguard events | head -3`, `lifeguard hosts | true`) closes the pipe:
// the command ends quietly, as Unix tools do, instead of dying on EPIPE with a stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    process.exit(typeof process.exitCode === 'number' ? process.exitCode : 0);
  });
}

const code = await runCli(process.argv.slice(2));
process.exitCode = code;
// Connections are closed by runCli; a library timer left behind must not keep the command alive.
setTimeout(() => process.exit(code), 1000).unref();
