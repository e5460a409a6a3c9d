import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { startCloudSim } from '@lifeguard/cloud-sim';
import { BrokerRefusedError, ConfigError } from '@lifeguard/runtime';
import { REDIS_URL, waitFor } from '@lifeguard/testing';
import { parse } from 'yaml';
import {
  BrokerNotReachableError,
  ForeignStateError,
  resetSimulatedState,
  SIMULATED_STATE_MARKER,
  type Stack,
  StackConfigurationError,
  StateInUseError,
  startStack,
  VhostInUseError,
  WorkerStartError,
} from '../src/index.ts';
import { alertedCounterSeries, seriesValues } from './support/alert-series.ts';
import {
  processExists,
  processesWithEnvironment,
  stackBedsForFile,
  unusedListenPort,
} from './support/stack-bed.ts';

const stacks: Stack[] = [];
// Registered before the beds' hook, so every stack stops before its bed closes.
after(async () => {
  for (const stack of stacks) await stack.stop();
});
const bed = stackBedsForFile();

function commandLine(pid: number): string[] {
  return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
}

describe('startStack with the simulated cloud', () => {
  it('starts every worker as its own process running its compiled main.js, each ready on /readyz, and stop() ends them all cleanly', async () => {
    const test = await bed('stack-start');
    const stack = await startStack(test.options({ evacuationWorkers: 2 }));
    stacks.push(stack);
    assert.deepEqual(
      stack.workers.map((worker) => worker.name),
      [
        'provisioning-blocks',
        'port-status',
        'node-monitor',
        'fencing-worker',
        'evacuation-worker-1',
        'evacuation-worker-2',
        'instance-restart-worker',
        'masakari-api',
        'masakari-engine',
      ],
    );
    const pids = new Set(stack.workers.map((worker) => worker.pid));
    assert.equal(pids.size, 9, 'nine distinct processes');
    for (const worker of stack.workers) {
      const response = await fetch(`${worker.baseUrl}/readyz`);
      assert.equal(response.status, 200, `${worker.name} ready`);
      const argv = commandLine(worker.pid!);
      assert.equal(argv.length, 2, `${worker.name}: node and the script, nothing else: ${argv.join(' ')}`);
      assert.equal(argv[1], worker.options.definition.script);
      assert.match(argv[1]!, /^packages\/[a-z-]+\/dist\/main\.js$/);
    }
    assert.equal(stack.worker('port-status').options.env.LIFEGUARD_PROVISIONING_ROLE, 'port-status');
    // The port-status process names itself port-status: logs, metrics label.
    const portStatusRecords = test.lines.filter((line) => line.worker === 'port-status' && line.record);
    assert.ok(portStatusRecords.some((line) => line.record?.msg === 'port-status starting'));
    assert.deepEqual(
      [...new Set(portStatusRecords.map((line) => line.record?.service))],
      ['port-status'],
      'every port-status log line says service "port-status"',
    );
    const portStatusMetrics = await (await fetch(`${stack.worker('port-status').baseUrl}/metrics`)).text();
    assert.match(portStatusMetrics, /service="port-status"/);
    assert.doesNotMatch(portStatusMetrics, /service="provisioning-blocks"/);
    assert.equal(stack.worker('provisioning-blocks').options.env.LIFEGUARD_PROVISIONING_ROLE, 'service');
    // The node monitor polled the simulated cloud: its 12 compute services.
    await waitFor('a poll cycle of 12 services', () =>
      test.lines.some(
        (line) =>
          line.worker === 'node-monitor' &&
          /^Poll cycle completed: 12 compute services/.test(String(line.record?.msg)),
      ),
    );
    // Every labelled counter an alert reads through increase() is there at 0 from start-up: the first
    // failure after a start is then a rise from 0 (a series born at 1 would never fire the alert).
    const expositions = new Map<string, string>();
    for (const worker of stack.workers)
      expositions.set(worker.name, await (await fetch(`${worker.baseUrl}/metrics`)).text());
    const alerted = alertedCounterSeries();
    assert.ok(alerted.length >= 5, `the rules' labelled increase() series: ${JSON.stringify(alerted)}`);
    for (const series of alerted) {
      const exporting = [...expositions].filter(([, text]) => seriesValues(text, series).length > 0);
      assert.ok(
        exporting.length > 0,
        `${series.alert}: ${series.metric}${JSON.stringify(series.labels)} is exported at start-up`,
      );
      for (const [name, text] of exporting)
        assert.deepEqual(
          new Set(seriesValues(text, series)),
          new Set([0]),
          `${series.alert}: ${name} exports it at 0`,
        );
    }
    const deadLetters = {
      alert: '',
      metric: 'lifeguard_amqp_messages_total',
      labels: { outcome: 'dead_letter' },
    };
    for (const name of ['provisioning-blocks', 'port-status', 'fencing-worker'])
      assert.ok(
        seriesValues(expositions.get(name)!, deadLetters).length > 0,
        `${name} exports its dead letters at 0`,
      );

    const workers = [...stack.workers];
    await stack.stop();
    for (const worker of workers) {
      assert.deepEqual(worker.lastExit, { code: 0, signal: null }, `${worker.name} exited 0 after SIGTERM`);
      assert.equal(processExists(worker.pid!), false, `${worker.name} is gone`);
      assert.ok(
        test.messages(worker.name, 'shutdown complete').length === 1,
        `${worker.name} shut down gracefully`,
      );
    }
    assert.equal(existsSync(stack.files.manifest), false, 'stack.json is removed');
    const left = await test.redis.scan('0', 'MATCH', `${test.keyPrefix}:*`, 'COUNT', 10_000);
    assert.deepEqual(left[1], [], "the simulated run's Redis keys, marker included, are removed");
  });

  it('writes clouds.yaml, config.yaml and fencing.yaml (the real fence_redfish against each simulated BMC) readable only by the owner, and an env file for the CLI', async () => {
    const test = await bed('stack-files');
    const stack = await startStack(test.options({ instanceHa: { POLL: '3' } }));
    stacks.push(stack);
    const sim = stack.cloudSim!;
    for (const path of [
      stack.files.cloudsYaml!,
      stack.files.configYaml,
      stack.files.fencingYaml,
      stack.files.environmentFile,
    ]) {
      assert.equal(statSync(path).mode & 0o777, 0o600, `${path} is 0600`);
    }
    const fencing = parse(readFileSync(stack.files.fencingYaml, 'utf8')).FencingConfig;
    assert.deepEqual(Object.keys(fencing), stack.layout!.hosts);
    for (const host of stack.layout!.hosts) {
      const bmc = sim.bmc(host);
      assert.deepEqual(fencing[host], {
        agent: 'fence_redfish',
        ipaddr: '127.0.0.1',
        ipport: bmc.port,
        login: bmc.username,
        passwd: bmc.password,
        options: { ssl_insecure: 1 },
      });
    }
    const config = parse(readFileSync(stack.files.configYaml, 'utf8')).config;
    assert.equal(config.POLL, '3', 'an override');
    assert.equal(config.DELTA, '10');
    assert.equal(config.SMART_EVACUATION, 'true');
    assert.equal(config.RESERVED_HOSTS, 'true');
    const clouds = parse(readFileSync(stack.files.cloudsYaml!, 'utf8')).clouds;
    assert.equal(clouds['lifeguard-sim'].auth.endpoint, sim.urls.compute);
    const environment = readFileSync(stack.files.environmentFile, 'utf8');
    assert.match(environment, new RegExp(`^export LIFEGUARD_REDIS_KEY_PREFIX='${test.keyPrefix}'$`, 'm'));
    assert.match(environment, /^export OS_CLOUD='lifeguard-sim'$/m);
    assert.match(environment, new RegExp(`^export LIFEGUARD_CLOUD_SIM_URL='${sim.urls.api}'$`, 'm'));
    const manifest = JSON.parse(readFileSync(stack.files.manifest, 'utf8'));
    assert.deepEqual(
      manifest.workers.map((worker: { pid: number }) => worker.pid),
      stack.workers.map((worker) => worker.pid),
    );
    assert.ok(!JSON.stringify(manifest).includes('guest:guest'), 'the AMQP password is not in stack.json');
    await stack.stop();
  });

  it('the demo recovers a killed host: fenced through fence_redfish, evacuable servers ACTIVE elsewhere (a spare enabled), powered on, re-enabled', async () => {
    const test = await bed('stack-demo');
    const stack = await startStack(test.options());
    stacks.push(stack);
    const sim = stack.cloudSim!;
    const servers = sim.model.servers.onHost('compute-03').map((server) => server.id);
    const byName = (name: string) =>
      [...servers].map((id) => sim.model.servers.get(id)!).find((each) => each.name === name)!;
    sim.killHost('compute-03');
    await waitFor(
      'compute-03 fenced (powered off)',
      () => sim.powerState('compute-03') === 'Off',
      60_000,
      100,
    );
    await waitFor(
      'web-03 and db-03 ACTIVE on other hosts',
      () =>
        ['web-03', 'db-03'].every(
          (name) => byName(name).host !== 'compute-03' && byName(name).vmState === 'active',
        ),
      60_000,
      100,
    );
    assert.equal(byName('batch-03').host, 'compute-03', 'the untagged server is not evacuated');
    for (const name of ['web-03', 'db-03'])
      assert.equal(sim.evacuateCalls(byName(name).id), 1, `${name} evacuated once`);
    const spare = sim.hostStates().find((host) => host.host === 'compute-11')!;
    assert.equal(spare.status, 'enabled', 'the first reserved spare was enabled');
    await waitFor(
      'compute-03 on, up, enabled and no longer forced down',
      () => {
        const host = sim.hostStates().find((each) => each.host === 'compute-03')!;
        return (
          host.powerState === 'On' && host.state === 'up' && host.status === 'enabled' && !host.forcedDown
        );
      },
      90_000,
      200,
    );
    await stack.stop();
  });

  it("run: 'source' starts the workers from their TypeScript (no build needed), each ready", async () => {
    const test = await bed('stack-source');
    const stack = await startStack(test.options({ run: 'source' }));
    stacks.push(stack);
    for (const worker of stack.workers) {
      assert.equal(commandLine(worker.pid!)[1], worker.options.definition.sourceScript);
      assert.equal((await fetch(`${worker.baseUrl}/readyz`)).status, 200, `${worker.name} ready`);
    }
    await stack.stop();
    for (const worker of stack.workers)
      assert.deepEqual(worker.lastExit, { code: 0, signal: null }, worker.name);
  });

  it('a killed worker is reported while the others go on, and restartWorker brings it back ready', async () => {
    const test = await bed('stack-restart');
    const stack = await startStack(test.options());
    stacks.push(stack);
    const exits: Array<{ name: string; expected: boolean }> = [];
    stack.on('worker-exit', (worker, _exit, expected) => exits.push({ name: worker.name, expected }));
    const fencing = stack.worker('fencing-worker');
    const firstPid = fencing.pid;
    fencing.kill('SIGKILL');
    await fencing.exited;
    assert.deepEqual(exits, [{ name: 'fencing-worker', expected: false }]);
    assert.ok(
      test.lines.some(
        (line) =>
          line.worker === 'stack' &&
          line.record?.msg === 'fencing-worker was ended by SIGKILL; the other workers go on',
      ),
    );
    for (const worker of stack.workers.filter((each) => each !== fencing)) assert.equal(worker.running, true);
    await stack.restartWorker('fencing-worker');
    assert.notEqual(fencing.pid, firstPid);
    assert.equal((await fetch(`${fencing.baseUrl}/readyz`)).status, 200);
    const listed = JSON.parse(readFileSync(stack.files.manifest, 'utf8')).workers as Array<{
      name: string;
      pid: number;
    }>;
    assert.equal(
      listed.find((each) => each.name === 'fencing-worker')?.pid,
      fencing.pid,
      "stack.json lists the restarted worker's pid, not its first (regression)",
    );
    await stack.stop();
  });

  it('refuses to reset keys under the prefix that a simulated stack did not write, and leaves them alone', async () => {
    const test = await bed('stack-foreign');
    await test.redis.set(`${test.keyPrefix}:incident:real`, 'belongs to a real deployment');
    await test.redis.set(`${test.keyPrefix}:node-monitor:leader:token`, '1');
    await assert.rejects(startStack(test.options()), (error: unknown) => {
      assert.ok(error instanceof ForeignStateError);
      assert.match(error.message, new RegExp(`holds 2 keys under the prefix "${test.keyPrefix}:"`));
      assert.ok(
        error.message.includes(
          `(${test.keyPrefix}:incident:real, ${test.keyPrefix}:node-monitor:leader:token)`,
        ),
        'the keys are named',
      );
      assert.match(error.message, /LIFEGUARD_REDIS_KEY_PREFIX/);
      return true;
    });
    assert.equal(await test.redis.get(`${test.keyPrefix}:incident:real`), 'belongs to a real deployment');
  });

  it('refuses to reset the state of a running stack (processes registered under the prefix), naming them and LIFEGUARD_REDIS_KEY_PREFIX', async () => {
    const test = await bed('stack-running');
    await test.redis.set(`${test.keyPrefix}:${SIMULATED_STATE_MARKER}`, new Date().toISOString());
    await test.redis.set(`${test.keyPrefix}:incident:open`, 'the running stack’s incident');
    await test.redis.set(`${test.keyPrefix}:workers:node-monitor:host-a:node-monitor`, '{}', 'EX', 15);
    await assert.rejects(resetSimulatedState(REDIS_URL, test.keyPrefix), (error: unknown) => {
      assert.ok(error instanceof StateInUseError);
      assert.match(error.message, /1 process registered: node-monitor host-a:node-monitor/);
      assert.match(error.message, /LIFEGUARD_REDIS_KEY_PREFIX=/);
      return true;
    });
    assert.equal(await test.redis.get(`${test.keyPrefix}:incident:open`), 'the running stack’s incident');
    await test.redis.del(`${test.keyPrefix}:workers:node-monitor:host-a:node-monitor`);
    assert.equal(await resetSimulatedState(REDIS_URL, test.keyPrefix), 2, 'reset once nothing runs');
  });

  it("treats BullMQ's queue metadata alone (what reading a queue's depth writes) as no state: it is reset", async () => {
    const test = await bed('stack-meta-only');
    await test.redis.hset(`${test.keyPrefix}:bull:fencing:meta`, 'opts.maxLenEvents', '10000');
    assert.equal(await resetSimulatedState(REDIS_URL, test.keyPrefix), 1);
    assert.equal(await test.redis.exists(`${test.keyPrefix}:bull:fencing:meta`), 0);
    assert.ok(await test.redis.get(`${test.keyPrefix}:${SIMULATED_STATE_MARKER}`));
  });

  it('refuses a vhost where lifeguard workers already consume, so it never takes their events', async () => {
    const first = await bed('stack-vhost-first');
    const stack = await startStack(first.options());
    stacks.push(stack);
    const second = await bed('stack-vhost-second');
    await assert.rejects(startStack(second.options({ amqpUrl: first.vhost.url })), (error: unknown) => {
      assert.ok(error instanceof VhostInUseError);
      assert.ok(
        error.queues.some(
          (queue) => queue.queue === 'lifeguard.fencing-worker.host-down' && queue.consumers === 1,
        ),
      );
      assert.match(error.message, /rabbitmqctl add_vhost/);
      return true;
    });
    for (const worker of stack.workers)
      assert.equal(worker.running, true, `${worker.name} of the first stack runs on`);
    await stack.stop();
  });

  it("resets its own keys of an earlier simulated run that was killed: the earlier run's incidents are gone", async () => {
    const test = await bed('stack-reset');
    // A run that was killed leaves its keys and its marker behind.
    await test.redis.set(`${test.keyPrefix}:${SIMULATED_STATE_MARKER}`, 'an earlier run');
    await test.redis.set(`${test.keyPrefix}:incidents:open:compute-03`, 'left over');
    const second = await startStack(test.options());
    stacks.push(second);
    assert.equal(await test.redis.get(`${test.keyPrefix}:incidents:open:compute-03`), null);
    await second.stop();
  });
});

describe('startStack when a broker cannot be reached', () => {
  it('stops at once naming RabbitMQ, its address (password masked) and how to start it; nothing is started or written', async () => {
    const test = await bed('stack-no-rabbit');
    const port = await unusedListenPort();
    await assert.rejects(
      startStack(test.options({ amqpUrl: `amqp://guest:guest@127.0.0.1:${port}/` })),
      (error: unknown) => {
        assert.ok(error instanceof BrokerNotReachableError);
        assert.deepEqual(
          error.problems.map((problem) => problem.broker),
          ['RabbitMQ'],
        );
        assert.match(
          error.message,
          new RegExp(
            `RabbitMQ is not reachable at amqp://guest:\\*\\*\\*@127\\.0\\.0\\.1:${port}/ \\(.*ECONNREFUSED`,
          ),
        );
        assert.match(error.message, /systemctl start rabbitmq-server/);
        assert.match(error.message, /docker compose up -d rabbitmq redis/);
        assert.match(error.message, /LIFEGUARD_AMQP_URL/);
        assert.ok(!error.message.includes('guest:guest'));
        return true;
      },
    );
    assert.equal(existsSync(join(test.stateDirectory, 'clouds.yaml')), false, 'nothing written');
  });

  it('names Redis and its address when Redis is the one missing, and both when both are', async () => {
    const test = await bed('stack-no-redis');
    const redisPort = await unusedListenPort();
    await assert.rejects(
      startStack(test.options({ redisUrl: `redis://127.0.0.1:${redisPort}/0` })),
      (error: unknown) => {
        assert.ok(error instanceof BrokerNotReachableError);
        assert.deepEqual(
          error.problems.map((problem) => problem.broker),
          ['Redis'],
        );
        assert.match(
          error.message,
          new RegExp(`Redis is not reachable at redis://127\\.0\\.0\\.1:${redisPort}/0`),
        );
        assert.match(error.message, /systemctl start redis-server/);
        assert.match(error.message, /docker compose up -d rabbitmq redis/);
        return true;
      },
    );
    const amqpPort = await unusedListenPort();
    await assert.rejects(
      startStack(
        test.options({
          amqpUrl: `amqp://127.0.0.1:${amqpPort}`,
          redisUrl: `redis://127.0.0.1:${redisPort}/0`,
        }),
      ),
      (error: unknown) => error instanceof BrokerNotReachableError && error.problems.length === 2,
    );
  });
});

describe('startStack when a broker answers but refuses', () => {
  it('a wrong RabbitMQ password: the credentials in LIFEGUARD_AMQP_URL were refused (exit 78), nothing is started or written', async () => {
    const test = await bed('stack-amqp-password');
    const url = new URL(test.vhost.url);
    url.password = 'wrong-secret';
    await assert.rejects(startStack(test.options({ amqpUrl: url.toString() })), (error: unknown) => {
      assert.ok(error instanceof BrokerRefusedError, String(error));
      assert.ok(error instanceof ConfigError, 'exit 78');
      assert.match(
        error.message,
        /^RabbitMQ at amqp:\/\/guest:\*\*\*@127\.0\.0\.1:5672\/t-stack-amqp-password-\w+ refused the user name "guest" and password in LIFEGUARD_AMQP_URL: ACCESS_REFUSED/,
      );
      assert.doesNotMatch(error.message, /not reachable|systemctl start|wrong-secret/);
      return true;
    });
    assert.equal(existsSync(join(test.stateDirectory, 'clouds.yaml')), false, 'nothing written');
  });

  it('a Redis database that does not exist (/99): refused naming LIFEGUARD_REDIS_URL; database 0 is not reset or marked', async () => {
    const test = await bed('stack-redis-db');
    const url = new URL(REDIS_URL);
    url.pathname = '/99';
    await assert.rejects(startStack(test.options({ redisUrl: url.toString() })), (error: unknown) => {
      assert.ok(error instanceof BrokerRefusedError, String(error));
      assert.match(
        error.message,
        /refused database 99 in LIFEGUARD_REDIS_URL: SELECT 99: ERR DB index is out of range/,
      );
      return true;
    });
    assert.equal(await test.redis.exists(`${test.keyPrefix}:${SIMULATED_STATE_MARKER}`), 0);
    assert.equal(existsSync(join(test.stateDirectory, 'clouds.yaml')), false, 'nothing written');
  });

  it('a Redis database part that is not a number (/abc): a configuration error naming LIFEGUARD_REDIS_URL', async () => {
    const test = await bed('stack-redis-abc');
    const url = new URL(REDIS_URL);
    url.pathname = '/abc';
    await assert.rejects(startStack(test.options({ redisUrl: url.toString() })), (error: unknown) => {
      assert.ok(error instanceof StackConfigurationError, String(error));
      assert.match(
        error.message,
        /LIFEGUARD_REDIS_URL \(startStack options\): the database \(the path after host:port\) must be a whole number/,
      );
      return true;
    });
  });

  it('a missing vhost next to an unreachable Redis: both named, each with its own reason (exit 69)', async () => {
    const test = await bed('stack-vhost-and-redis');
    const amqpUrl = new URL(test.vhost.url);
    amqpUrl.pathname = '/lifeguard-stack-no-such-vhost';
    const redisPort = await unusedListenPort();
    await assert.rejects(
      startStack(test.options({ amqpUrl: amqpUrl.toString(), redisUrl: `redis://127.0.0.1:${redisPort}/0` })),
      (error: unknown) => {
        assert.ok(error instanceof BrokerNotReachableError, String(error));
        assert.deepEqual(error.problems.map((problem) => problem.broker).sort(), ['RabbitMQ', 'Redis']);
        assert.match(
          error.message,
          new RegExp(
            `Redis is not reachable at redis://127\\.0\\.0\\.1:${redisPort}/0 \\(connect ECONNREFUSED`,
          ),
        );
        assert.match(
          error.message,
          /refused the virtual host "lifeguard-stack-no-such-vhost" in LIFEGUARD_AMQP_URL: NOT_ALLOWED - vhost lifeguard-stack-no-such-vhost not found\. It does not exist: create it with rabbitmqctl add_vhost/,
        );
        assert.doesNotMatch(error.message, /RabbitMQ is not reachable/);
        return true;
      },
    );
  });
});

describe('startStack against an OpenStack cloud (OS_CLOUD)', () => {
  it('runs with no simulated piece, on the operator clouds.yaml, config.yaml and fencing.yaml as they are', async () => {
    const test = await bed('stack-openstack');
    const cloud = await startCloudSim({ hosts: 2 });
    try {
      const cloudsFile = join(test.stateDirectory, 'operator-clouds.yaml');
      writeFileSync(cloudsFile, JSON.stringify({ clouds: { production: cloud.cloudEntry('admin_token') } }));
      const configYaml = join(test.stateDirectory, 'operator-config.yaml');
      writeFileSync(configYaml, 'config:\n  POLL: "15"\n  TAGGED_AGGREGATES: "false"\n');
      const fencingYaml = join(test.stateDirectory, 'operator-fencing.yaml');
      writeFileSync(
        fencingYaml,
        'FencingConfig:\n  compute1: { agent: ipmi, ipaddr: "192.0.2.10", ipport: "623", login: admin, passwd: "x" }\n',
      );
      const stack = await startStack(
        test.options({
          cloud: {
            kind: 'openstack',
            cloudName: 'production',
            cloudsFile,
            instanceHaConfigPath: configYaml,
            fencingConfigPath: fencingYaml,
          },
        }),
      );
      stacks.push(stack);
      assert.equal(stack.cloudSim, null);
      assert.equal(stack.files.cloudsYaml, null);
      assert.equal(existsSync(join(test.stateDirectory, 'clouds.yaml')), false);
      for (const worker of stack.workers) {
        assert.equal(worker.options.env.OS_CLOUD, 'production');
        assert.equal(worker.options.env.FENCING_CONFIG_PATH, fencingYaml);
        // The simulated stack's demo variables are not applied to a real cloud.
        assert.equal(
          worker.options.env.LIFEGUARD_FENCING_ALLOW_LOOPBACK,
          process.env.LIFEGUARD_FENCING_ALLOW_LOOPBACK,
        );
      }
      await waitFor('a poll of the operator cloud', () =>
        test.lines.some(
          (line) =>
            line.worker === 'node-monitor' &&
            /^Poll cycle completed: 2 compute services/.test(String(line.record?.msg)),
        ),
      );
      await stack.stop();
    } finally {
      await cloud.close();
    }
  });

  it('stops before starting anything when config.yaml or fencing.yaml is not given, naming the variable', async () => {
    const test = await bed('stack-openstack-missing');
    await assert.rejects(
      startStack(
        test.options({
          cloud: {
            kind: 'openstack',
            cloudName: 'production',
            instanceHaConfigPath: '',
            fencingConfigPath: '/nowhere',
          },
        }),
      ),
      (error: unknown) =>
        error instanceof StackConfigurationError &&
        /OS_CLOUD=production .*config\.yaml \(INSTANCEHA_CONFIG_PATH\)/.test(error.message),
    );
  });
});

describe('startStack when a worker cannot start', () => {
  it('reports the worker, its exit status meaning and its last output, stops the others and removes its Redis keys', async () => {
    const test = await bed('stack-bad-config');
    const attempt = startStack(
      test.options({ workerEnvironment: { 'fencing-worker': { LIFEGUARD_FENCING_ATTEMPTS: 'many' } } }),
    );
    await assert.rejects(attempt, (error: unknown) => {
      assert.ok(error instanceof WorkerStartError, `expected a WorkerStartError, got ${String(error)}`);
      assert.equal(error.worker, 'fencing-worker');
      assert.match(error.message, /exited with status 78 \(invalid configuration\)/);
      assert.match(error.message, /LIFEGUARD_FENCING_ATTEMPTS/);
      return true;
    });
    // The other workers are stopped, whether or not they had finished starting (on a loaded machine
    // the fencing worker can fail before any other is up): no process of this stack's key prefix remains.
    assert.deepEqual(
      processesWithEnvironment('LIFEGUARD_REDIS_KEY_PREFIX', test.keyPrefix),
      [],
      'a worker process of the failed stack is still running',
    );
    // What the workers that did start wrote (an outbox, a memory probe, the run's marker) is removed.
    const [, keys] = await test.redis.scan('0', 'MATCH', `${test.keyPrefix}:*`, 'COUNT', 10_000);
    assert.deepEqual(keys, [], "the failed run's Redis keys are removed");
  });
});
