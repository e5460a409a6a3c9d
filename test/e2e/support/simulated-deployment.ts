import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { type CloudModelSettings, type CloudSim, startCloudSim } from '@lifeguard/cloud-sim';
import {
  createTestVhost,
  deleteKeysWithPrefix,
  randomKeyPrefix,
  type TestVhost,
  testRedis,
} from '@lifeguard/testing';
import type { Redis } from 'ioredis';
import { CloudRecorder } from './cloud-recorder.ts';
import { ConfigurationFiles } from './configuration-files.ts';
import { EventTimeline } from './event-timeline.ts';
import { type Lifeguard, startLifeguard, waitForPollCycles } from './lifeguard.ts';
import { storedText } from './redis-contents.ts';

/** The flavor whose extra spec `evacuable=true` makes a server evacuable (TAGGED_FLAVORS). */
export const EVACUABLE_FLAVOR = '10';

export interface SimulatedDeploymentOptions {
  /** Names the vhost and the Redis key prefix. */
  readonly label: string;
  readonly hosts: ReadonlyArray<string>;
  /** Servers of the evacuable flavor per host. */
  readonly evacuableServers: Readonly<Record<string, number>>;
  /** Servers of the untagged flavor `m1.tiny` per host. */
  readonly untaggedServers?: Readonly<Record<string, number>>;
  readonly model: Partial<CloudModelSettings>;
  /** InstanceHA keys over the defaults below (POLL 1, DELTA 4, THRESHOLD 50, TAGGED_AGGREGATES, ...). */
  readonly instanceHa?: Readonly<Record<string, string | number | boolean>>;
}

/**
 * A simulated cloud (cloud-sim in this process: a Redfish BMC per host with its own password, an
 * evacuable flavor, an evacuable aggregate holding every host) and lifeguard's Instance HA workers
 * against it — node monitor, fencing worker with the real fence_redfish, evacuation worker — on a
 * private vhost and Redis prefix, with the events timeline and the cloud recorder running.
 */
export class SimulatedDeployment {
  private constructor(
    readonly sim: CloudSim,
    readonly vhost: TestVhost,
    readonly redis: Redis,
    readonly keyPrefix: string,
    readonly files: ConfigurationFiles,
    readonly timeline: EventTimeline,
    readonly recorder: CloudRecorder,
    readonly lifeguard: Lifeguard,
  ) {}

  static async start(options: SimulatedDeploymentOptions): Promise<SimulatedDeployment> {
    const sim = await startCloudSim({ hosts: [...options.hosts], model: options.model });
    for (const host of sim.model.hosts.values()) host.bmc.password = `Rf-${randomBytes(6).toString('hex')}`;
    sim.model.addFlavor({ id: EVACUABLE_FLAVOR, name: 'ha.small', extraSpecs: { evacuable: 'true' } });
    const aggregate = sim.model.addAggregate('ha-hosts');
    aggregate.metadata.evacuable = 'true';
    aggregate.hosts.push(...options.hosts);
    for (const [host, count] of Object.entries(options.evacuableServers)) {
      for (let index = 0; index < count; index++)
        sim.addServer({ host, name: `${host}-ha-${index}`, flavorId: EVACUABLE_FLAVOR });
    }
    for (const [host, count] of Object.entries(options.untaggedServers ?? {})) {
      for (let index = 0; index < count; index++)
        sim.addServer({ host, name: `${host}-untagged-${index}`, flavorId: '1' });
    }
    const vhost = await createTestVhost(options.label);
    const redis = testRedis();
    const keyPrefix = randomKeyPrefix(options.label);
    const files = new ConfigurationFiles();
    const timeline = await EventTimeline.start(vhost.url);
    const recorder = new CloudRecorder(sim);
    const lifeguard = await startLifeguard({
      workers: ['node-monitor', 'fencing-worker', 'evacuation-worker'],
      amqpUrl: vhost.url,
      keyPrefix,
      cloudName: 'sim',
      cloudsFile: files.cloudsYaml('sim', sim.cloudEntry('admin_token')),
      configYaml: files.configYaml({
        POLL: 1,
        DELTA: 4,
        THRESHOLD: 50,
        TAGGED_AGGREGATES: true,
        FENCING_TIMEOUT: 20,
        EVACUATION_TIMEOUT: 60,
        ...options.instanceHa,
      }),
      fencingYaml: files.fencingYaml(
        Object.fromEntries(
          options.hosts.map((host) => {
            const bmc = sim.bmc(host);
            return [
              host,
              {
                agent: 'fence_redfish',
                ipaddr: bmc.address,
                ipport: bmc.port,
                login: bmc.username,
                passwd: bmc.password,
                options: { ssl_insecure: 1, power_timeout: 10 },
              },
            ];
          }),
        ),
      ),
      environment: { LIFEGUARD_UNSAFE_SHORT_INTERVALS: 'true', LIFEGUARD_LOG_LEVEL: 'debug' },
      workerEnvironment: {
        'node-monitor': { LIFEGUARD_NODE_MONITOR_LEASE_TTL_SECONDS: '5' },
        'fencing-worker': {
          LIFEGUARD_FENCING_ALLOW_LOOPBACK: 'true',
          LIFEGUARD_FENCING_BACKOFF_SECONDS: '1',
        },
        'evacuation-worker': {
          LIFEGUARD_EVACUATION_FIRST_CHECK_SECONDS: '0.2',
          LIFEGUARD_EVACUATION_POLL_SECONDS: '0.2',
          LIFEGUARD_EVACUATION_RECHECK_SECONDS: '0.5',
        },
      },
    }).catch(async (error: unknown) => {
      recorder.stop();
      await timeline.close();
      await sim.close();
      await redis.quit();
      await vhost.delete();
      files.remove();
      throw error;
    });
    return new SimulatedDeployment(sim, vhost, redis, keyPrefix, files, timeline, recorder, lifeguard);
  }

  /** Waits until the node monitor completed `count` more poll cycles than it had when called. */
  pollCycles(count: number): Promise<void> {
    return waitForPollCycles(this.lifeguard, count);
  }

  /**
   * Stops everything and removes what it created; then asserts that no BMC password ever appeared in
   * a worker's output, a published event or a Redis key of the deployment.
   */
  async stop(): Promise<void> {
    this.recorder.stop();
    await this.lifeguard.stop();
    const stored = await storedText(this.redis, this.keyPrefix);
    const published = JSON.stringify(this.timeline.events);
    const output = this.lifeguard.text();
    await this.timeline.close();
    await this.sim.close();
    await deleteKeysWithPrefix(this.redis, this.keyPrefix);
    await this.redis.quit();
    await this.vhost.delete();
    this.files.remove();
    for (const host of this.sim.model.hosts.values()) {
      assert.ok(!output.includes(host.bmc.password), `the BMC password of ${host.name} was logged`);
      assert.ok(!published.includes(host.bmc.password), `the BMC password of ${host.name} is in an event`);
      assert.ok(!stored.includes(host.bmc.password), `the BMC password of ${host.name} is stored in Redis`);
    }
  }
}
