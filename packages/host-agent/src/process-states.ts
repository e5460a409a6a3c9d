import { readdirSync, readFileSync } from 'node:fs';
import { basename } from 'node:path';
import type { ProcessState } from '@lifeguard/contracts';

/** One process as /proc shows it: its command name and its arguments. */
export interface ProcessEntry {
  /** `/proc/<pid>/comm`: the executable's name, at most 15 characters. */
  readonly comm: string;
  /** `/proc/<pid>/cmdline`, split at its NULs. */
  readonly argv: ReadonlyArray<string>;
}

/** Interpreters whose first argument is the program they run (`python3 /usr/bin/nova-compute`). */
const INTERPRETERS = /^(python[0-9.]*|perl|ruby|node|bash|sh)$/;

/**
 * Whether each watched process runs: a process is `name` when its command name is (the kernel keeps
 * 15 characters of it), or its program is, the program being argv[0] or, for an interpreter,
 * the script it runs (`/usr/bin/python3 /usr/bin/nova-compute --config-file ...`).
 */
export function processStates(
  watched: ReadonlyArray<string>,
  processes: ReadonlyArray<ProcessEntry>,
): Record<string, ProcessState> {
  const running = new Set<string>();
  for (const entry of processes) {
    running.add(entry.comm);
    const program = basename(entry.argv[0] ?? '');
    running.add(program);
    if (INTERPRETERS.test(program)) {
      const script = entry.argv.slice(1).find((argument) => !argument.startsWith('-'));
      if (script) running.add(basename(script));
    }
  }
  const states: Record<string, ProcessState> = {};
  for (const name of watched) {
    states[name] = running.has(name) || running.has(name.slice(0, 15)) ? 'running' : 'stopped';
  }
  return states;
}

/**
 * Every process of `/proc` (or `root`) with its command name and arguments (none for a kernel
 * thread); a process that ends while it is read is skipped.
 */
export function readProcesses(root = '/proc'): ProcessEntry[] {
  const entries: ProcessEntry[] = [];
  for (const pid of readdirSync(root)) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const comm = readFileSync(`${root}/${pid}/comm`, 'utf8').trim();
      const argv = readFileSync(`${root}/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
      entries.push({ comm, argv });
    } catch {
      // The process ended between the listing and the read.
    }
  }
  return entries;
}
