import type { Readable, Writable } from 'node:stream';

/** A stream the command writes to; `isTTY` decides tables-with-spinner versus plain lines. */
export type OutputStream = Writable & { isTTY?: boolean; columns?: number };

/**
 * Where a command reads and writes: the process's streams and environment by default, captured ones
 * in tests (`runCli(argv, io)`).
 */
export interface CliIo {
  readonly stdout: OutputStream;
  readonly stderr: OutputStream;
  /** Read for interactive confirmation on a terminal. */
  readonly stdin: Readable & { isTTY?: boolean };
  readonly env: NodeJS.ProcessEnv;
}

/** The process's own streams and environment. */
export function processIo(): CliIo {
  return { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env };
}
