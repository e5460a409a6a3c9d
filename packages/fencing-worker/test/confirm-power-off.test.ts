// confirmPowerOff: what a fence reports when the power is never read back as off.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLogger } from '@lifeguard/runtime';
import { confirmPowerOff, type DriverContext, type PowerState } from '../src/drivers/fence-driver.ts';
import { FencingError } from '../src/errors.ts';

const context: DriverContext = {
  logger: createLogger({ service: 'test', level: 'silent' }),
  secrets: [],
  timing: { retryDelaysMilliseconds: [], pollIntervalMilliseconds: 10 },
};

/** Runs confirmPowerOff over `reads` (one per call, the last repeated) and returns its error. */
async function failure(reads: ReadonlyArray<PowerState | Error>): Promise<FencingError> {
  let call = 0;
  const readState = async (): Promise<PowerState> => {
    const read = reads[Math.min(call++, reads.length - 1)]!;
    if (read instanceof Error) throw read;
    return read;
  };
  const error = await confirmPowerOff('fence_x 192.0.2.1', 0.1, context, readState).then(
    () => null,
    (caught: unknown) => caught,
  );
  assert.ok(error instanceof FencingError, 'the wait ends with a FencingError');
  assert.equal(error.kind, 'not-confirmed');
  return error;
}

const timedOut = () =>
  new FencingError('unreachable', 'fence_x 192.0.2.1 action=status: no result within 1406 ms');

describe('confirmPowerOff: a power-off never read back as off', () => {
  it('names the power state read, not a later read that timed out (an agent that lied about off, on a loaded machine)', async () => {
    const error = await failure(['on', timedOut()]);
    assert.equal(
      error.message,
      'fence_x 192.0.2.1: power off not confirmed within 0.1 s (power state still on; the read after it failed: fence_x 192.0.2.1 action=status: no result within 1406 ms)',
    );
  });

  it('names the power state when every read said on', async () => {
    const error = await failure(['on']);
    assert.equal(
      error.message,
      'fence_x 192.0.2.1: power off not confirmed within 0.1 s (power state still on)',
    );
  });

  it('names the read error when no read succeeded', async () => {
    const error = await failure([timedOut()]);
    assert.match(
      error.message,
      /within 0\.1 s \(fence_x 192\.0\.2\.1 action=status: no result within 1406 ms\)$/,
    );
  });

  it('returns as soon as a read says off', async () => {
    let reads = 0;
    await confirmPowerOff('fence_x 192.0.2.1', 5, context, async () => (++reads < 3 ? 'on' : 'off'));
    assert.equal(reads, 3);
  });
});
