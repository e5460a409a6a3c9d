import { readFileSync } from 'node:fs';

/**
 * Calls `onGone` once, when the process whose pid is `parentPid` is no longer this process's parent
 * (it ended and this process was reparented, e.g. to init). Checked every `intervalMilliseconds`
 * (default 1000 ms); the timer never keeps the process alive.
 * @returns a function that stops watching
 */
export function watchParentProcess(
  parentPid: number,
  onGone: () => void,
  intervalMilliseconds = 1000,
): () => void {
  const timer = setInterval(() => {
    if (process.ppid !== parentPid) {
      clearInterval(timer);
      onGone();
    }
  }, intervalMilliseconds);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * The parent pid of process `pid` on Linux (field 4 of `/proc/<pid>/stat`), or null where /proc
 * cannot be read (another system, the process gone).
 */
export function parentOf(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: the fields after it follow the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const parent = Number(fields[1]);
    return Number.isInteger(parent) && parent > 0 ? parent : null;
  } catch {
    return null;
  }
}

/**
 * Calls `onGone` once, when the process `pid` (not necessarily this process's parent) no longer
 * exists, checked with signal 0 every `intervalMilliseconds` (default 1000 ms); the timer never keeps
 * the process alive.
 * @returns a function that stops watching
 */
export function watchProcessGone(pid: number, onGone: () => void, intervalMilliseconds = 1000): () => void {
  const timer = setInterval(() => {
    try {
      process.kill(pid, 0);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ESRCH') return;
      clearInterval(timer);
      onGone();
    }
  }, intervalMilliseconds);
  timer.unref();
  return () => clearInterval(timer);
}
