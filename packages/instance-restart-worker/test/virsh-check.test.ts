import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { JOB_QUEUES } from '@lifeguard/contracts';
import { bullmqPrefix, ConfigError, createLogger, EXIT_CONFIG } from '@lifeguard/runtime';
import {
  brokerlessEnvironment,
  CapturedLines,
  deleteKeysWithPrefix,
  randomKeyPrefix,
  startProgramUntil,
  testRedis,
  waitFor,
} from '@lifeguard/testing';
import { Queue } from 'bullmq';
import { checkVirsh, InstanceMonitor } from '../src/index.ts';

const directory = mkdtempSync(join(tmpdir(), 'virsh-check-'));
after(() => rmSync(directory, { recursive: true, force: true }));

const missing = join(directory, 'no-such-virsh');

/** Whether `error` is a ConfigError naming LIFEGUARD_INSTANCE_MONITOR_VIRSH and saying `why`. */
function namesVirsh(why: RegExp) {
  return (error: unknown) =>
    error instanceof ConfigError &&
    error.problems[0]?.key === 'LIFEGUARD_INSTANCE_MONITOR_VIRSH' &&
    why.test(error.message);
}

describe('checkVirsh: the configured virsh can be run, checked at the instance monitor’s start-up', () => {
  it('gives the version of Debian’s virsh (libvirt-clients) found on PATH', async () => {
    assert.match(await checkVirsh('virsh'), /^\d+\.\d+/);
  });

  it('refuses a path with no file, naming the variable and the path', async () => {
    await assert.rejects(
      checkVirsh(missing),
      namesVirsh(new RegExp(`${missing} cannot be run: no such file`)),
    );
  });

  it('refuses a bare name not on PATH, naming PATH', async () => {
    await assert.rejects(
      checkVirsh('no-such-virsh', { PATH: directory }),
      namesVirsh(new RegExp(`no-such-virsh cannot be run: not found on PATH \\(${directory}\\)`)),
    );
  });

  it('refuses a file that is not executable', async () => {
    const path = join(directory, 'not-executable');
    writeFileSync(path, '#!/bin/sh\n');
    chmodSync(path, 0o644);
    await assert.rejects(checkVirsh(path), namesVirsh(/not executable/));
  });

  it('refuses a program whose --version fails, with its exit status and first line', async () => {
    const path = join(directory, 'failing-virsh');
    writeFileSync(path, '#!/bin/sh\necho "error: unknown option" >&2\nexit 3\n');
    chmodSync(path, 0o755);
    await assert.rejects(checkVirsh(path), namesVirsh(/failed \(exit status 3\): error: unknown option/));
  });

  it('lifeguard-instance-monitor with a virsh that does not exist exits 78 naming the variable and the path, before any broker', async () => {
    const started = await startProgramUntil(
      'instance-restart-worker',
      'monitor/monitor-main',
      { ...(await brokerlessEnvironment()), LIFEGUARD_INSTANCE_MONITOR_VIRSH: missing },
      () => false,
    );
    assert.equal(started.code, EXIT_CONFIG);
    const text = started.lines.join('\n');
    assert.match(text, /LIFEGUARD_INSTANCE_MONITOR_VIRSH \(environment\)/);
    assert.match(text, new RegExp(`${missing} cannot be run`));
  });
});

describe('a virsh that ends while the instance monitor runs (libvirtd restarted)', () => {
  it('is started again with backoff, not refused', async () => {
    // A virsh whose `event` ends at once, as when libvirtd goes away; each run is counted.
    const runs = join(directory, 'event-runs');
    const virsh = join(directory, 'ending-virsh');
    writeFileSync(
      virsh,
      `#!/bin/sh\ncase " $* " in *" event "*) echo run >> ${runs}; exit 1;; esac\nexit 0\n`,
    );
    chmodSync(virsh, 0o755);
    const prefix = randomKeyPrefix('virsh-restarts');
    const redis = testRedis();
    const queue = new Queue(JOB_QUEUES.instanceRestart, { connection: redis, prefix: bullmqPrefix(prefix) });
    const logs = new CapturedLines();
    const monitor = new InstanceMonitor({
      virsh,
      uri: 'test:///default',
      host: 'compute-1',
      queue,
      logger: createLogger({ service: 'instance-monitor', level: 'info', destination: logs }),
    });
    try {
      await monitor.start();
      const count = () => (existsSync(runs) ? readFileSync(runs, 'utf8').split('\n').length - 1 : 0);
      await waitFor('virsh event run a third time', () => count() >= 3, 15_000);
      const delays = logs
        .records()
        .filter((record) => record.msg === 'virsh event ended; starting it again')
        .map((record) => record.delayMilliseconds);
      assert.deepEqual(delays.slice(0, 2), [1000, 2000]);
    } finally {
      await monitor.stop();
      await queue.close();
      await deleteKeysWithPrefix(redis, prefix);
      redis.disconnect();
    }
  });
});
