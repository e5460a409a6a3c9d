#!/usr/bin/env node
// The `lifeguard` command. npm links this file when the workspace is installed, before anything is
// built, so it only loads the compiled command from dist/ (written by `npm run build`).
import { existsSync } from 'node:fs';

const entry = new URL('../dist/main.js', import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write('lifeguard: the command is not built yet: run `npm run build` first\n');
  process.exit(1);
}
await import(entry.href);
