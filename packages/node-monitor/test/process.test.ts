import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AdmissionSummaryStore } from '@lifeguard/instance-ha';
import {
  createTestVhost,
  deleteKeysWithPrefix,
  REDIS_URL,
  randomKeyPrefix,
  type TestVhost,
  testRedis,
  waitFor,
} from '@lifeguard/testing';
import { startMonitorProcess, writeInstanceHaConfig } from './support/monitor-process.ts';

// A cloud that does not answer: every poll fails.
const unreachableCloud = {
  OS_AUTH_TYPE: 'admin_token',
  OS_TOKEN: 'admin:admin',
  OS_ENDPOINT: 'http://127.0.0.1:9/v2.1',
};

describe('node-monitor process: bad configuration', () => {
  it('stops with exit 78 on a bad LOGLEVEL, naming the key and the file', async () => {
    const path = writeInstanceHaConfig({ LOGLEVEL: 'verbose' });
    const monitor = startMonitorProcess('bad-loglevel', {
      ...unreachableCloud,
      INSTANCEHA_CONFIG_PATH: path,
    });
    assert.equal(await monitor.exited, 78);
    assert.match(
      monitor.lines.join('\n'),
      new RegExp(`LOGLEVEL \\(${path.replaceAll('/', '\\/')}\\): must be one of`),
    );
  });

  it('stops with exit 78 on a config file that is not YAML, naming the file and INSTANCEHA_CONFIG_PATH', async () => {
    const path = writeInstanceHaConfig({});
    const { writeFileSync } = await import('node:fs');
    writeFileSync(path, 'config:\n  POLL: "45\n');
    const monitor = startMonitorProcess('bad-yaml', { ...unreachableCloud, INSTANCEHA_CONFIG_PATH: path });
    assert.equal(await monitor.exited, 78);
    assert.match(
      monitor.lines.join('\n'),
      new RegExp(
        `invalid configuration: INSTANCEHA_CONFIG_PATH \\(${path.replaceAll('/', '\\/')}\\): not valid YAML`,
      ),
    );
    assert.doesNotMatch(monitor.lines.join('\n'), /\(file\)/, 'no placeholder for the key');
  });

  it('stops with exit 78 on an invalid node-monitor variable, naming it', async () => {
    const monitor = startMonitorProcess('bad-lease', {
      ...unreachableCloud,
      INSTANCEHA_CONFIG_PATH: writeInstanceHaConfig({}),
      LIFEGUARD_NODE_MONITOR_LEASE_TTL_SECONDS: 'soon',
    });
    assert.equal(await monitor.exited, 78);
    assert.match(monitor.lines.join('\n'), /LIFEGUARD_NODE_MONITOR_LEASE_TTL_SECONDS \(environment\)/);
  });

  it("stops with exit 78 naming LIFEGUARD_REDIS_URL and Redis's answer for a database Redis does not have (/99), leaving database 0 alone", async () => {
    const prefix = randomKeyPrefix('monitor-db99');
    const url = new URL(REDIS_URL);
    url.pathname = '/99';
    const monitor = startMonitorProcess('redis-db-99', {
      ...unreachableCloud,
      INSTANCEHA_CONFIG_PATH: writeInstanceHaConfig({}),
      LIFEGUARD_REDIS_URL: url.toString(),
      LIFEGUARD_REDIS_KEY_PREFIX: prefix,
    });
    assert.equal(await monitor.exited, 78);
    const output = monitor.lines.join('\n');
    assert.match(
      output,
      /refused database 99 in LIFEGUARD_REDIS_URL: SELECT 99: ERR DB index is out of range/,
    );
    assert.doesNotMatch(output, /node-monitor starting|leader/);
    const redis = testRedis();
    try {
      assert.deepEqual(await redis.keys(`${prefix}:*`), [], 'no lease, no heartbeat in database 0');
    } finally {
      await redis.quit();
    }
  });

  it('stops with exit 78 naming LIFEGUARD_REDIS_URL for a database part that is not a number (/abc), not a stack trace', async () => {
    const url = new URL(REDIS_URL);
    url.pathname = '/abc';
    const monitor = startMonitorProcess('redis-db-abc', {
      ...unreachableCloud,
      INSTANCEHA_CONFIG_PATH: writeInstanceHaConfig({}),
      LIFEGUARD_REDIS_URL: url.toString(),
    });
    assert.equal(await monitor.exited, 78);
    const output = monitor.lines.join('\n');
    assert.match(
      output,
      /LIFEGUARD_REDIS_URL \(environment\): the database \(the path after host:port\) must be a whole number/,
    );
    assert.doesNotMatch(output, /ReplyError|at parseError/);
  });
});

describe('node-monitor process: a wrong value type, an unreachable Nova, health and metrics', () => {
  const redis = testRedis();
  const prefix = randomKeyPrefix('monitor-process');
  let vhost: TestVhost;
  before(async () => {
    vhost = await createTestVhost('monitor-process');
  });
  after(async () => {
    await vhost.delete();
    await deleteKeysWithPrefix(redis, prefix);
    await redis.quit();
  });

  it('warns naming the key and the file for an unparsable integer, logs the keys as applied, tries a failed poll again within POLL, is live but not ready', async () => {
    const path = writeInstanceHaConfig({ POLL: 'forty', DELTA: 10, UNKNOWN_KEY: 'x' });
    const monitor = startMonitorProcess('unreachable-nova', {
      ...unreachableCloud,
      INSTANCEHA_CONFIG_PATH: path,
      LIFEGUARD_AMQP_URL: vhost.url,
      LIFEGUARD_REDIS_URL: REDIS_URL,
      LIFEGUARD_REDIS_KEY_PREFIX: prefix,
      LIFEGUARD_NODE_MONITOR_LEASE_TTL_SECONDS: '2',
    });
    try {
      const warning = await monitor.waitForLog(/^configuration: POLL/);
      assert.equal(warning.key, 'POLL');
      assert.equal(warning.source, path);
      assert.match(String(warning.msg), /not an integer \(seconds\); using the default 45/);
      const unknown = await monitor.waitForLog(/keys not used by lifeguard/);
      assert.deepEqual(unknown.keys, ['UNKNOWN_KEY']);
      const applied = await monitor.waitForLog(/^node-monitor configuration$/);
      assert.deepEqual(
        [applied.DELTA, applied.THRESHOLD_SUSPECT_AGE, applied.MASS_EVENT_HOLD_DOWN],
        [10, 5, 20],
        "lifeguard's own keys as applied: 0 means DELTA ÷ 2 and 2 × DELTA",
      );
      const failure = await monitor.waitForLog(/^Poll failed \(1 in a row\); next attempt in \d+\.\ds/);
      const retrySeconds = Number(failure.retrySeconds);
      assert.ok(retrySeconds > 36 && retrySeconds <= 45, `tried again within POLL (45 s): ${retrySeconds}`);
      // The operator tools see the leader polling and failing, not "no leader has polled".
      const failedPoll = await waitFor('the failed poll recorded', () =>
        new AdmissionSummaryStore(redis, prefix).readFailure().then((record) => record ?? undefined),
      );
      assert.equal(failedPoll.consecutiveFailures, 1);
      assert.ok(failedPoll.reason.length > 0, 'the failed poll says why');
      const port = await monitor.adminPort();
      const readiness = await fetch(`http://127.0.0.1:${port}/readyz`);
      assert.equal(readiness.status, 503, 'not ready before a good poll');
      const liveness = await fetch(`http://127.0.0.1:${port}/healthz`);
      assert.equal(liveness.status, 200, 'live: the loop is sleeping as planned');
      const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      assert.match(metrics, /lifeguard_poll_cycles_total\{result="error",service="node-monitor"\} 1/);
      assert.match(metrics, /lifeguard_poll_consecutive_failures\{service="node-monitor"\} 1/);
      assert.match(metrics, /lifeguard_node_monitor_leader\{service="node-monitor"\} 1/);
    } finally {
      monitor.kill('SIGTERM');
      assert.equal(await monitor.exited, 0, 'a graceful stop on SIGTERM');
    }
    const exitedAt = Date.now();
    await waitFor(
      'the lease released',
      async () => (await redis.get(`${prefix}:node-monitor:leader`)) === null,
    );
    const records = monitor.records();
    const released = records.find((record) => record.msg === 'leader lease released');
    assert.equal(released?.level, 30, 'giving the lease up at stop is logged at info');
    assert.deepEqual(
      records
        .filter((record) => /lease lost|standing by/.test(String(record.msg)))
        .map((record) => record.msg),
      [],
      'a stop is not reported as a lost lease',
    );
    const complete = records.find((record) => record.msg === 'shutdown complete');
    assert.ok(complete, 'shutdown complete was logged');
    const exitMilliseconds = exitedAt - Date.parse(String(complete.time));
    assert.ok(exitMilliseconds < 1000, `the process ended ${exitMilliseconds} ms after "shutdown complete"`);
  });
});
