import { spawn } from 'node:child_process';

/** What a finished program left behind. `timedOut` is true when it was killed at the deadline. */
export interface ProgramResult {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

export interface RunProgramOptions {
  /** Arguments; never a secret (argv is world-readable in /proc/<pid>/cmdline). */
  args: ReadonlyArray<string>;
  /** The complete environment of the program (nothing is inherited). */
  env: Readonly<Record<string, string>>;
  /** Written to standard input, which is then closed; standard input is empty when absent. */
  stdin?: string;
  /** Kill the program (and its process group) after this many milliseconds. */
  timeoutMilliseconds: number;
  /** Called with the child's process id right after it started (tests inspect /proc/<pid>). */
  onSpawn?: (pid: number) => void;
  /** Output kept per stream, in bytes (default 256 KiB); the rest is dropped. */
  maximumOutputBytes?: number;
}

/** Minimal PATH given to BMC tools: system directories only. */
export const SYSTEM_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/**
 * Runs a program in its own process group with a clean environment, feeds `stdin`, collects its
 * output and kills the whole group (SIGKILL) at the deadline, so helpers a fence agent started
 * (ipmitool, ssh) do not outlive it.
 * @throws Error only when the program cannot be started (missing, not executable)
 */
export function runProgram(path: string, options: RunProgramOptions): Promise<ProgramResult> {
  const limit = options.maximumOutputBytes ?? 256 * 1024;
  return new Promise((resolve, reject) => {
    const child = spawn(path, [...options.args], {
      env: { ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
    });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    let stdoutBytes = 0;
    let stderrBytes = 0;
    let timedOut = false;
    let settled = false;
    child.stdout.on('data', (chunk: Buffer) => {
      if (stdoutBytes < limit) stdout.push(chunk);
      stdoutBytes += chunk.length;
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderrBytes < limit) stderr.push(chunk);
      stderrBytes += chunk.length;
    });
    const killGroup = () => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, options.timeoutMilliseconds);
    child.on('error', (error) => {
      clearTimeout(timer);
      if (settled) return;
      settled = true;
      reject(error);
    });
    child.on('spawn', () => {
      if (child.pid !== undefined) options.onSpawn?.(child.pid);
    });
    child.on('close', (exitCode, signal) => {
      clearTimeout(timer);
      if (settled) return;
      settled = true;
      resolve({
        exitCode,
        signal,
        stdout: Buffer.concat(stdout).toString('utf8'),
        stderr: Buffer.concat(stderr).toString('utf8'),
        timedOut,
      });
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.stdin ?? '');
  });
}
