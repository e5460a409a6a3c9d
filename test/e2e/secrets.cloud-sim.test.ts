// No secret leaks during a whole incident. lifeguard runs as an operator runs it against a cloud
// (startStack with OS_CLOUD, clouds.yaml, config.yaml and fencing.yaml; every worker its own
// process) on cloud-sim with its Keystone: the node monitor and fencing worker log in with a
// password, the evacuation worker with an application credential; every host is fenced by the real
// /usr/sbin/fence_redfish against its simulated Redfish BMC, each BMC with its own password; the node
// monitor checks HBV2 heartbeats signed with an HMAC key the test sends with. Each secret is a
// distinctive string. A host is killed (its BMC first resets connections, so fence_redfish fails and
// its error output is logged and stored) and recovered; meanwhile the test samples
// /proc/<pid>/cmdline of every running fence agent. Then no secret may appear in any worker's
// stdout/stderr, an event on the events exchange, anything stored under the deployment's Redis
// prefix (BullMQ job data included), any /metrics page, or a fence agent's or worker's process
// arguments.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { readdirSync, readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { type CloudSim, startCloudSim } from '@lifeguard/cloud-sim';
import { encodeHeartbeat } from '@lifeguard/node-monitor';
import {
  DEMO_INSTANCE_HA_CONFIG,
  type DemoCloudLayout,
  demoCloudLayout,
  seedDemoCloud,
} from '@lifeguard/stack';
import {
  closedPort,
  createTestVhost,
  deleteKeysWithPrefix,
  randomKeyPrefix,
  type TestVhost,
  testRedis,
  waitFor,
} from '@lifeguard/testing';
import type { Redis } from 'ioredis';
import { ConfigurationFiles, type FencingEntry } from './support/configuration-files.ts';
import { EventTimeline } from './support/event-timeline.ts';
import { storedText } from './support/redis-contents.ts';
import { StackRun } from './support/stack-run.ts';

const unique = randomBytes(4).toString('hex');
const CLOUD_PASSWORD = `Cloud-Pass-${unique}-q7Zt`;
const APPLICATION_CREDENTIAL_SECRET = `AppCred-Secret-${unique}-w3Rk`;
const HEARTBEAT_KEY_HEX = randomBytes(32).toString('hex');
const heartbeatKey = Buffer.from(HEARTBEAT_KEY_HEX, 'hex');

/** Command lines of running fence agents, sampled from /proc every few milliseconds. */
class FenceAgentSampler {
  readonly commandLines = new Set<string>();
  private running = true;
  private readonly loop: Promise<void>;

  constructor() {
    this.loop = this.sample();
  }

  private async sample(): Promise<void> {
    while (this.running) {
      for (const entry of readdirSync('/proc')) {
        if (!/^\d+$/.test(entry)) continue;
        let commandLine: string;
        try {
          commandLine = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ');
        } catch {
          continue;
        }
        if (/\/fence_[a-z]/.test(commandLine)) this.commandLines.add(commandLine);
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
  }
}

describe('no secret appears anywhere during a whole incident (cloud-sim Keystone, fence_redfish, HBV2)', {
  timeout: 300_000,
}, () => {
  let sim: CloudSim;
  let layout: DemoCloudLayout;
  let vhost: TestVhost;
  let redis: Redis;
  let keyPrefix: string;
  let files: ConfigurationFiles;
  let timeline: EventTimeline;
  let run: StackRun;
  let heartbeatPort: number;
  const bmcPasswords = new Map<string, string>();

  before(async () => {
    layout = demoCloudLayout({ hosts: 6 });
    sim = await startCloudSim({
      listenHost: '127.0.0.1',
      port: 0,
      redfishPort: 0,
      hosts: [...layout.hosts],
      servers: 0,
      auth: 'keystone',
      adminPassword: CLOUD_PASSWORD,
      model: {
        reportIntervalSeconds: 1,
        serviceDownTimeSeconds: 4,
        bootMilliseconds: 1000,
        evacuation: { acceptMilliseconds: 0, rebuildMilliseconds: 1500 },
      },
    });
    seedDemoCloud(sim, layout, 2);
    const credential = sim.identity.addApplicationCredential(
      sim.admin,
      'lifeguard-evacuation',
      APPLICATION_CREDENTIAL_SECRET,
    );
    files = new ConfigurationFiles();
    const fencing: Record<string, FencingEntry> = {};
    for (const host of layout.hosts) {
      const password = `Bmc-Pass-${host}-${unique}`;
      sim.model.hosts.get(host)!.bmc.password = password;
      bmcPasswords.set(host, password);
      const bmc = sim.bmc(host);
      fencing[host] = {
        agent: 'fence_redfish',
        ipaddr: '127.0.0.1',
        ipport: bmc.port,
        login: bmc.username,
        passwd: password,
        options: { ssl_insecure: 1 },
      };
    }
    const passwordEntry = sim.cloudEntry('password');
    const applicationCredentialEntry = {
      auth_type: 'v3applicationcredential',
      auth: {
        auth_url: passwordEntry.auth.auth_url,
        application_credential_id: credential.id,
        application_credential_secret: APPLICATION_CREDENTIAL_SECRET,
      },
      region_name: 'RegionOne',
      interface: 'public',
      identity_api_version: 3,
    };
    const cloudsFile = files.write(
      'clouds.yaml',
      `${JSON.stringify({ clouds: { 'sim-password': passwordEntry, 'sim-appcred': applicationCredentialEntry } }, null, 2)}\n`,
    );
    const keyFile = files.write('heartbeat.key', `${HEARTBEAT_KEY_HEX}\n`);
    heartbeatPort = await closedPort();
    vhost = await createTestVhost('e2e-secrets');
    redis = testRedis();
    keyPrefix = randomKeyPrefix('e2e-secrets');
    timeline = await EventTimeline.start(vhost.url);
    run = await StackRun.start({
      amqpUrl: vhost.url,
      keyPrefix,
      cloud: {
        kind: 'openstack',
        cloudName: 'sim-password',
        cloudsFile,
        instanceHaConfigPath: files.configYaml({
          ...DEMO_INSTANCE_HA_CONFIG,
          POLL: 1,
          DELTA: 4,
          CHECK_HEARTBEAT: true,
          HEARTBEAT_PORT: heartbeatPort,
          LOGLEVEL: 'DEBUG',
        }),
        fencingConfigPath: files.fencingYaml(fencing),
      },
      environment: { LIFEGUARD_UNSAFE_SHORT_INTERVALS: 'true', LIFEGUARD_LOG_LEVEL: 'debug' },
      workerEnvironment: {
        'node-monitor': { HEARTBEAT_HMAC_KEY_PATH: keyFile, LIFEGUARD_HEARTBEAT_LISTEN_ADDRESS: '127.0.0.1' },
        'fencing-worker': {
          LIFEGUARD_FENCING_ALLOW_LOOPBACK: 'true',
          LIFEGUARD_FENCING_BACKOFF_SECONDS: '1',
        },
        'evacuation-worker': {
          OS_CLOUD: 'sim-appcred',
          LIFEGUARD_EVACUATION_FIRST_CHECK_SECONDS: '0.2',
          LIFEGUARD_EVACUATION_POLL_SECONDS: '0.2',
        },
      },
    });
  });

  after(async () => {
    await run?.stop();
    await timeline?.close();
    if (redis) {
      await deleteKeysWithPrefix(redis, keyPrefix);
      await redis.quit();
    }
    await vhost?.delete();
    files?.remove();
    await sim?.close();
  });

  it('a host is fenced through fence_redfish and recovered, and no secret is in output, events, Redis, /metrics or fence agent arguments', async () => {
    const source = layout.protectedHosts[1]!;
    const sampler = new FenceAgentSampler();
    const socket = createSocket('udp4');
    const sendHeartbeats = () => {
      for (const host of layout.hosts) {
        if (host === source) continue;
        socket.send(encodeHeartbeat(host, heartbeatKey), heartbeatPort, '127.0.0.1');
      }
      // A forged heartbeat for the killed host: rejected, and its key must not be logged either.
      socket.send(encodeHeartbeat(source, randomBytes(32)), heartbeatPort, '127.0.0.1');
    };
    sendHeartbeats();
    const heartbeats = setInterval(sendHeartbeats, 1000);
    let metricsPages: string[];
    let workerCommandLines: string;
    // The first fence attempts fail (the BMC resets connections), so fence_redfish's failure output
    // and the worker's error path are part of what is checked.
    const bmc = sim.model.hosts.get(source)!.bmc;
    bmc.unreachable = true;
    try {
      sim.killHost(source);
      await waitFor(
        'a failed fence attempt',
        () =>
          run
            .records('fencing-worker')
            .some(
              (record) => record.host === source && String(record.reason ?? '').startsWith('fence_redfish'),
            ),
        60_000,
        100,
      );
      bmc.unreachable = false;
      const down = await timeline.waitFor('host.down', (event) => event.data.host === source, 60_000);
      await timeline.waitFor(
        'host.fenced',
        (event) => event.data.host === source && event.data.incidentId === down.data.incidentId,
        60_000,
      );
      await timeline.waitFor(
        'host.evacuated',
        (event) => event.data.host === source && event.data.incidentId === down.data.incidentId,
        120_000,
      );
      workerCommandLines = run.stack.workers
        .map((worker) => readFileSync(`/proc/${worker.pid}/cmdline`, 'utf8').replaceAll('\0', ' '))
        .join('\n');
      metricsPages = await Promise.all(
        run.stack.workers.map(async (worker) => (await fetch(`${worker.baseUrl}/metrics`)).text()),
      );
    } finally {
      clearInterval(heartbeats);
      socket.close();
      await sampler.stop();
    }
    const stored = await storedText(redis, keyPrefix);
    const published = JSON.stringify(timeline.events);
    const output = run.text();
    const commandLines = [...sampler.commandLines].join('\n');

    // The places looked at hold what they should: the sampler saw fence_redfish run, the job data
    // of the incident is in Redis, every worker served /metrics, the forged heartbeat was counted.
    assert.match(commandLines, /fence_redfish/, 'fence_redfish was seen running');
    assert.ok(stored.includes(source), 'the incident (job data, journal) is stored under the prefix');
    assert.equal(metricsPages.length, run.stack.workers.length);
    assert.match(workerCommandLines, /node/, 'every worker process was running');
    assert.match(
      metricsPages.join('\n'),
      /lifeguard_heartbeat_rejected_total\{[^}]*reason="hmac_failed"[^}]*\} [1-9]/,
    );

    const secrets: Array<[string, string]> = [
      ['the cloud password', CLOUD_PASSWORD],
      ['the application credential secret', APPLICATION_CREDENTIAL_SECRET],
      ['the heartbeat HMAC key', HEARTBEAT_KEY_HEX],
      ...[...bmcPasswords].map(([host, password]): [string, string] => [
        `the BMC password of ${host}`,
        password,
      ]),
    ];
    const places: Array<[string, string]> = [
      ['worker output', output],
      ['an event', published],
      ['Redis', stored],
      ['a /metrics page', metricsPages.join('\n')],
      ['a fence agent command line', commandLines],
      ["a worker's command line", workerCommandLines],
    ];
    for (const [secret, value] of secrets) {
      for (const [place, text] of places) {
        assert.ok(!text.includes(value), `${secret} appears in ${place}`);
      }
    }
  });
});
