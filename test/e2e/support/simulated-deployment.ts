import assert from 'node:assert/strict';
import type { CloudSim, SimServer } from '@lifeguard/cloud-sim';
import {
  DEMO_EVACUABLE_TAG,
  type DemoCloudLayout,
  type SimulatedCloudOptions,
  type StackOptions,
} from '@lifeguard/stack';
import {
  createTestVhost,
  deleteKeysWithPrefix,
  randomKeyPrefix,
  type TestVhost,
  testRedis,
} from '@lifeguard/testing';
import type { Redis } from 'ioredis';
import { CloudRecorder } from './cloud-recorder.ts';
import { EventTimeline } from './event-timeline.ts';
import { storedText } from './redis-contents.ts';
import { StackRun } from './stack-run.ts';

export interface SimulatedDeploymentOptions {
  /** Names the vhost and the Redis key prefix. */
  readonly label: string;
  /** The simulated cloud's options (hosts, Nova timings, evacuation timing) over the demo's. */
  readonly cloud?: Omit<SimulatedCloudOptions, 'kind'>;
  /** InstanceHA keys over the demo config.yaml (e.g. `{ POLL: '1' }`). */
  readonly instanceHa?: Readonly<Record<string, string>>;
  /** Variables for the workers of one kind. */
  readonly workerEnvironment?: Readonly<Record<string, Readonly<Record<string, string>>>>;
  /** The stack's restart policy for a worker that ends unexpectedly (default: none, as startStack). */
  readonly restartWorkers?: StackOptions['restartWorkers'];
}

/**
 * lifeguard as `npm start` runs it with no cloud configured — every worker its own process and
 * cloud-sim as the embedded default cloud with the demo layout (aggregates, tagged flavors and image,
 * reserved hosts, a Redfish BMC per host fenced by the real fence_redfish) — on a private vhost and
 * Redis prefix, with the events timeline and the cloud recorder running.
 */
export class SimulatedDeployment {
  private constructor(
    readonly run: StackRun,
    readonly vhost: TestVhost,
    readonly redis: Redis,
    readonly keyPrefix: string,
    readonly timeline: EventTimeline,
    readonly recorder: CloudRecorder,
  ) {}

  static async start(options: SimulatedDeploymentOptions): Promise<SimulatedDeployment> {
    const vhost = await createTestVhost(options.label);
    const redis = testRedis();
    const keyPrefix = randomKeyPrefix(options.label);
    const timeline = await EventTimeline.start(vhost.url);
    try {
      const run = await StackRun.start({
        amqpUrl: vhost.url,
        keyPrefix,
        cloud: { kind: 'simulated', ...options.cloud },
        instanceHa: options.instanceHa ?? {},
        workerEnvironment: options.workerEnvironment ?? {},
        ...(options.restartWorkers ? { restartWorkers: options.restartWorkers } : {}),
      });
      return new SimulatedDeployment(
        run,
        vhost,
        redis,
        keyPrefix,
        timeline,
        new CloudRecorder(run.stack.cloudSim!),
      );
    } catch (error) {
      await timeline.close();
      await redis.quit();
      await vhost.delete();
      throw error;
    }
  }

  get sim(): CloudSim {
    return this.run.stack.cloudSim!;
  }

  get layout(): DemoCloudLayout {
    return this.run.stack.layout!;
  }

  /** Whether lifeguard may evacuate the server: its flavor's extra specs or its image carry the evacuable tag. */
  evacuable(server: SimServer): boolean {
    const image = this.sim.model.images.get(server.imageId);
    return (
      server.flavor.extra_specs[DEMO_EVACUABLE_TAG] === 'true' ||
      (image?.tags.includes(DEMO_EVACUABLE_TAG) ?? false)
    );
  }

  /**
   * Stops everything and removes what it created; then asserts that no BMC password ever appeared in
   * a worker's output, a published event or a Redis key of the deployment.
   */
  async stop(): Promise<void> {
    this.recorder.stop();
    const stored = await storedText(this.redis, this.keyPrefix);
    const hosts = [...this.sim.model.hosts.values()];
    await this.run.stop();
    const published = JSON.stringify(this.timeline.events);
    const output = this.run.text();
    await this.timeline.close();
    await deleteKeysWithPrefix(this.redis, this.keyPrefix);
    await this.redis.quit();
    await this.vhost.delete();
    for (const host of hosts) {
      assert.ok(!output.includes(host.bmc.password), `the BMC password of ${host.name} was logged`);
      assert.ok(!published.includes(host.bmc.password), `the BMC password of ${host.name} is in an event`);
      assert.ok(!stored.includes(host.bmc.password), `the BMC password of ${host.name} is stored in Redis`);
    }
  }
}
