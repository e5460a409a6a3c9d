#!/usr/bin/env node
import { runCli } from './program.ts';

const code = await runCli(process.argv.slice(2));
process.exitCode = code;
// Connections are closed by runCli; a library timer left behind must not keep the command alive.
setTimeout(() => process.exit(code), 1000).unref();
