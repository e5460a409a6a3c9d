import sonicBoom from 'sonic-boom';

// sonic-boom is CommonJS: its class is the module itself, typed as the module's `SonicBoom` member.
const { SonicBoom } = sonicBoom;
type SonicBoom = InstanceType<typeof SonicBoom>;

/** At exit, how many 100 ms waits a reader that takes nothing may cost before the lines left are dropped. */
const EXIT_WRITE_RETRIES = 20;

let shared: SonicBoom | null = null;

/**
 * The stream every lifeguard process logs to: standard output, written asynchronously, flushed when
 * the process exits, and never the reason a process cannot exit.
 *
 * pino's own standard output flushes at exit by retrying a failed write every 100 ms until it
 * succeeds; when the reader is gone (the launcher that started the process was killed: EPIPE) it
 * never succeeds, and the process hangs at `process.exit` for ever. Here:
 * - a write that fails for good (the reader gone, EBADF, EIO) ends logging quietly: the lines have
 *   nowhere to go, and a logger must not crash or stop the process it serves;
 * - at exit the lines still buffered get about two seconds of a reader that takes nothing, then
 *   are dropped and the process ends.
 * One stream per process, whatever the number of loggers.
 */
export function standardOutput(): SonicBoom {
  if (shared) return shared;
  let exitRetriesLeft: number | null = null;
  const stream = new SonicBoom({
    fd: process.stdout.fd ?? 1,
    sync: false,
    // While the process runs, a busy reader is waited for; at exit, only a bounded number of times.
    retryEAGAIN: () => exitRetriesLeft === null || exitRetriesLeft-- > 0,
  });
  const stop = () => {
    stream.write = () => true;
    stream.flush = (callback?: (error?: Error) => void) => callback?.();
    stream.flushSync = () => {};
  };
  stream.on('error', stop);
  process.on('exit', () => {
    exitRetriesLeft = EXIT_WRITE_RETRIES;
    try {
      stream.flushSync();
    } catch {
      stop();
    }
  });
  shared = stream;
  return stream;
}
