import assert from 'node:assert/strict';
import {
  createTestVhost,
  deleteKeysWithPrefix,
  type IpmiSimulator,
  randomKeyPrefix,
  startIpmiSimulator,
  type TestVhost,
  testRedis,
} from '@lifeguard/testing';
import type { Redis } from 'ioredis';
import { ConfigurationFiles, type FencingEntry } from './configuration-files.ts';
import { EventTimeline } from './event-timeline.ts';
import { realNova } from './real-nova.ts';
import { storedText } from './redis-contents.ts';
import { StackRun } from './stack-run.ts';

export interface RealNovaDeploymentOptions {
  /** Names the vhost and the Redis key prefix. */
  readonly label: string;
  /**
   * `ipmi`: each compute host gets an ipmi_sim BMC whose power-off SIGKILLs its nova-compute and
   * whose power-on starts it again, fenced through the real fence_ipmilan; `noop`: InstanceHA's noop
   * fencing (LIFEGUARD_FENCING_ALLOW_NOOP), as the peer's measurement used.
   */
  readonly fencing: 'ipmi' | 'noop';
  /** InstanceHA keys over the defaults (POLL 1, DELTA 10, TAGGED_AGGREGATES false, ...). */
  readonly instanceHa?: Readonly<Record<string, string | number | boolean>>;
  /** Log level of every worker (default debug). */
  readonly logLevel?: string;
  /** fencing.yaml entries that replace a host's (e.g. a BMC nothing answers on). */
  readonly fencingEntries?: Readonly<Record<string, FencingEntry>>;
  /** fencing-worker settings over the defaults (LIFEGUARD_FENCING_*). */
  readonly fencingWorkerEnvironment?: Readonly<Record<string, string>>;
  /** node-monitor settings over the defaults (e.g. HEARTBEAT_PORT, HEARTBEAT_HMAC_KEY_PATH). */
  readonly nodeMonitorEnvironment?: Readonly<Record<string, string>>;
  /** The clouds.yaml entry lifeguard uses instead of the harness's noauth2 one (e.g. through a proxy). */
  readonly cloudEntry?: unknown;
}

/**
 * lifeguard started as an operator starts it against a real cloud (startStack with OS_CLOUD, their
 * clouds.yaml, config.yaml and fencing.yaml; every worker its own process) on the real-Nova harness,
 * on a private vhost and Redis prefix, with the events timeline running. The harness must be running
 * (`npm test` starts it for `*.real-nova.test.ts`).
 */
export class RealNovaDeployment {
  private constructor(
    readonly nova: ReturnType<typeof realNova>,
    readonly bmcs: ReadonlyMap<string, IpmiSimulator>,
    readonly vhost: TestVhost,
    readonly redis: Redis,
    readonly keyPrefix: string,
    readonly files: ConfigurationFiles,
    readonly timeline: EventTimeline,
    readonly run: StackRun,
  ) {}

  static async start(options: RealNovaDeploymentOptions): Promise<RealNovaDeployment> {
    const nova = realNova();
    const bmcs = new Map<string, IpmiSimulator>();
    const files = new ConfigurationFiles();
    const vhost = await createTestVhost(options.label);
    const redis = testRedis();
    const keyPrefix = randomKeyPrefix(options.label);
    let timeline: EventTimeline | null = null;
    try {
      const entries: Record<string, FencingEntry> = {};
      for (const host of nova.hosts) {
        const replaced = options.fencingEntries?.[host];
        if (replaced !== undefined) {
          entries[host] = replaced;
          continue;
        }
        if (options.fencing === 'noop') {
          entries[host] = { agent: 'noop' };
          continue;
        }
        const bmc = await startIpmiSimulator({
          chassisCommands: { off: nova.chassisCommand('off', host), on: nova.chassisCommand('on', host) },
        });
        bmcs.set(host, bmc);
        entries[host] = {
          agent: 'fence_ipmilan',
          ipaddr: bmc.address,
          ipport: bmc.port,
          login: bmc.login,
          passwd: bmc.password,
          options: { lanplus: 1, cipher: 3 },
        };
      }
      timeline = await EventTimeline.start(vhost.url);
      const run = await StackRun.start({
        amqpUrl: vhost.url,
        keyPrefix,
        cloud: {
          kind: 'openstack',
          cloudName: 'real-nova',
          cloudsFile: files.cloudsYaml('real-nova', options.cloudEntry ?? nova.cloudEntry()),
          instanceHaConfigPath: files.configYaml({
            POLL: 1,
            DELTA: 10,
            THRESHOLD: 50,
            TAGGED_AGGREGATES: false,
            FENCING_TIMEOUT: 30,
            EVACUATION_TIMEOUT: 120,
            ...options.instanceHa,
          }),
          fencingConfigPath: files.fencingYaml(entries),
        },
        environment: {
          LIFEGUARD_UNSAFE_SHORT_INTERVALS: 'true',
          LIFEGUARD_LOG_LEVEL: options.logLevel ?? 'debug',
        },
        workerEnvironment: {
          'node-monitor': {
            LIFEGUARD_NODE_MONITOR_LEASE_TTL_SECONDS: '5',
            ...options.nodeMonitorEnvironment,
          },
          'fencing-worker': {
            LIFEGUARD_FENCING_ALLOW_LOOPBACK: 'true',
            LIFEGUARD_FENCING_BACKOFF_SECONDS: '1',
            ...(options.fencing === 'noop' ? { LIFEGUARD_FENCING_ALLOW_NOOP: 'true' } : {}),
            ...options.fencingWorkerEnvironment,
          },
          'evacuation-worker': {
            LIFEGUARD_EVACUATION_FIRST_CHECK_SECONDS: '0.2',
            LIFEGUARD_EVACUATION_POLL_SECONDS: '0.2',
            LIFEGUARD_EVACUATION_RECHECK_SECONDS: '0.5',
          },
        },
      });
      return new RealNovaDeployment(nova, bmcs, vhost, redis, keyPrefix, files, timeline, run);
    } catch (error) {
      await timeline?.close();
      await Promise.all([...bmcs.values()].map((bmc) => bmc.stop()));
      await redis.quit();
      await vhost.delete();
      files.remove();
      throw error;
    }
  }

  /**
   * Stops the workers and the BMCs, removes the vhost, keys and files, then asserts that no BMC
   * password appeared in a worker's output, an event or a Redis key. The harness itself is left to
   * `nova.restore()`.
   */
  async stop(): Promise<void> {
    const stored = await storedText(this.redis, this.keyPrefix);
    await this.run.stop();
    const published = JSON.stringify(this.timeline.events);
    const output = this.run.text();
    await this.timeline.close();
    await Promise.all([...this.bmcs.values()].map((bmc) => bmc.stop()));
    await deleteKeysWithPrefix(this.redis, this.keyPrefix);
    await this.redis.quit();
    await this.vhost.delete();
    this.files.remove();
    for (const [host, bmc] of this.bmcs) {
      assert.ok(!output.includes(bmc.password), `the BMC password of ${host} was logged`);
      assert.ok(!published.includes(bmc.password), `the BMC password of ${host} is in an event`);
      assert.ok(!stored.includes(bmc.password), `the BMC password of ${host} is stored in Redis`);
    }
  }
}
