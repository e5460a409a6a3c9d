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
