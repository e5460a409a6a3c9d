import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const STANDARD_OUTPUT = fileURLToPath(new URL('../src/logging/standard-output.ts', import.meta.url));

/**
 * A process logging through `standardOutput()` that prints "ready", then on SIGUSR2 logs
 * `lines` lines of about a kilobyte and calls process.exit(0) at once, with lines still buffered.
 */
function loggingProcess(lines: number): ChildProcess {
  const script = `
    import { pino } from 'pino';
    import { standardOutput } from ${JSON.stringify(STANDARD_OUTPUT)};
    const logger = pino({}, standardOutput());
    process.on('SIGUSR2', () => {
      for (let i = 0; i < ${lines}; i += 1) logger.info({ i, padding: 'x'.repeat(1000) }, 'line');
      process.exit(0);
    });
    setInterval(() => {}, 1000);
    logger.info('ready');
  `;
  return spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: fileURLToPath(new URL('..', import.meta.url)),
    stdio: ['ignore', 'pipe', 'inherit'],
  });
}

async function readyLine(child: ChildProcess): Promise<void> {
  let seen = '';
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      seen += chunk.toString('utf8');
      if (seen.includes('"msg":"ready"')) resolve();
    });
    child.once('exit', (code) =>
      reject(new Error(`the logging process exited (${code}) before it was ready`)),
    );
  });
}

/** Its exit status, or a failure if it has not ended `withinMilliseconds` after the signal (it hangs). */
async function exitAfter(child: ChildProcess, withinMilliseconds: number): Promise<number | null> {
  const timer = setTimeout(() => child.kill('SIGKILL'), withinMilliseconds);
  const [code, signal] = (await once(child, 'exit')) as [number | null, NodeJS.Signals | null];
  clearTimeout(timer);
  assert.equal(
    signal,
    null,
    `the process did not end by itself within ${withinMilliseconds} ms (it hung at exit)`,
  );
  return code;
}

describe('standardOutput (the log stream of every lifeguard process)', () => {
  it('lets a process exit when its reader is gone (the launcher killed: every write fails with EPIPE)', async () => {
    const child = loggingProcess(3);
    await readyLine(child);
    child.stdout?.destroy();
    child.kill('SIGUSR2');
    assert.equal(await exitAfter(child, 30_000), 0);
  });

  it('lets a process exit when its reader is there but takes nothing, after a bounded wait', async () => {
    const child = loggingProcess(4000);
    await readyLine(child);
    child.stdout?.pause();
    child.stdout?.removeAllListeners('data');
    child.kill('SIGUSR2');
    assert.equal(await exitAfter(child, 30_000), 0);
    child.stdout?.destroy();
  });

  it('writes every line when the reader reads, the lines still buffered at exit included', async () => {
    const child = loggingProcess(2000);
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    const closed = once(child, 'close');
    await readyLine(child);
    child.kill('SIGUSR2');
    assert.equal(await exitAfter(child, 30_000), 0);
    await closed;
    const lines = output.split('\n').filter((line) => line.includes('"msg":"line"'));
    assert.equal(lines.length, 2000);
    assert.deepEqual(
      lines.map((line) => JSON.parse(line).i),
      Array.from({ length: 2000 }, (_, index) => index),
    );
  });
});
