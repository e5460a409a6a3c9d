import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { describe, it } from 'node:test';
import { waitFor } from '@lifeguard/testing';
import { parentOf, watchProcessGone } from '../src/parent-process.ts';

describe("the launcher's watch of npm (its parent shell's parent)", () => {
  it("reads a process's parent from /proc, as `npm start` → sh → launcher needs", () => {
    assert.equal(parentOf(process.pid), process.ppid);
    assert.equal(parentOf(2 ** 22 + 12_345), null, 'a process that does not exist has no parent');
  });

  it('calls back once a watched process that is not its parent is gone (SIGKILL), and not before', async () => {
    const shell = spawn('sh', ['-c', 'sleep 60; true'], { stdio: 'ignore' });
    await waitFor('the shell started', () => shell.pid !== undefined);
    const shellPid = shell.pid as number;
    await waitFor('the shell to run under this process', () => parentOf(shellPid) === process.pid);
    let calls = 0;
    const stop = watchProcessGone(shellPid, () => calls++, 50);
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(calls, 0, 'the process still runs');
    const exited = new Promise((resolve) => shell.once('exit', resolve));
    shell.kill('SIGKILL');
    await exited;
    await waitFor('the watch noticed', () => calls === 1);
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(calls, 1, 'called once');
    stop();
  });
});
