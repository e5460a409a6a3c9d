import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { WorkerStartError, workerStartExitStatus } from '../src/index.ts';

describe("npm start's exit status when a worker does not start", () => {
  it("passes on a worker's invalid-configuration status (78), as the README's exit-status table says", () => {
    const error = new WorkerStartError(
      'fencing-worker',
      'exited with status 78 (invalid configuration)',
      [],
      78,
    );
    assert.equal(workerStartExitStatus(error), 78);
  });

  it("passes on a worker's broker-unavailable status (69)", () => {
    assert.equal(
      workerStartExitStatus(new WorkerStartError('node-monitor', 'exited with status 69', [], 69)),
      69,
    );
  });

  it('exits 1 for a worker that crashed, was ended by a signal or was never ready', () => {
    assert.equal(
      workerStartExitStatus(new WorkerStartError('node-monitor', 'exited with status 1', [], 1)),
      1,
    );
    assert.equal(
      workerStartExitStatus(new WorkerStartError('node-monitor', 'was ended by SIGKILL', [], null)),
      1,
    );
    assert.equal(
      workerStartExitStatus(new WorkerStartError('node-monitor', 'was not ready within 120 s', [])),
      1,
    );
  });
});
