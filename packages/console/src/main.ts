#!/usr/bin/env node
import { runMain } from '@lifeguard/runtime';
import { runConsoleProcess } from './console.ts';

runMain(async () => {
  await runConsoleProcess();
});
