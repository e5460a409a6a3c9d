import { type EventSink, JOB_QUEUES } from '@lifeguard/contracts';
import { IncidentStore } from '@lifeguard/instance-ha';
import type { ComputeApi } from '@lifeguard/openstack';
import { bullmqPrefix, type RedisClient, withTimeout } from '@lifeguard/runtime';
import { Queue, Worker } from 'bullmq';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { InstanceRestartProcessor } from './instance-restart-processor.ts';
import { createInstanceRestartMetrics, type InstanceRestartMetrics } from './metrics.ts';
import { RestartRecords } from './restart-records.ts';
import type { InstanceRestartWorkerSettings } from './settings.ts';

export interface InstanceRestartWorkerOptions {
  readonly compute: ComputeApi;
  readonly settings: InstanceRestartWorkerSettings;
  /** The deployment's Redis key prefix; BullMQ uses `<prefix>:bull`. */
  readonly keyPrefix: string;
  /** Commands: restart records, incidents. */
  readonly redis: RedisClient;
  connectRedis(role: 'worker' | 'producer', name: string): Promise<RedisClient>;
  readonly events: EventSink;
  readonly logger: Logger;
  readonly registry: Registry;
  readonly instanceName: string;
  /** The rule's wall clock (default the system's); tests inject one. */
  readonly now?: () => Date;
}

/**
 * The instance restart worker of one process: a BullMQ worker on `instance-restart` running
 * InstanceRestartProcessor, LIFEGUARD_INSTANCE_RESTART_CONCURRENCY jobs at once. Any number of
 * processes may run on the queue.
 */
export class InstanceRestartWorker {
  private constructor(
    readonly queue: Queue,
    private readonly worker: Worker,
    private readonly connections: ReadonlyArray<RedisClient>,
    readonly metrics: InstanceRestartMetrics,
    private readonly logger: Logger,
  ) {}

  static async start(options: InstanceRestartWorkerOptions): Promise<InstanceRestartWorker> {
    const { settings, logger } = options;
    const prefix = bullmqPrefix(options.keyPrefix);
    const producer = await options.connectRedis('producer', 'bullmq-producer');
    const connection = await options.connectRedis('worker', 'bullmq-instance-restart');
    const queue = new Queue(JOB_QUEUES.instanceRestart, { connection: producer, prefix });
    queue.on('error', (error) => logger.warn({ err: error }, 'BullMQ queue error'));
    const metrics = createInstanceRestartMetrics(options.registry);
    const processor = new InstanceRestartProcessor({
      compute: options.compute,
      incidents: new IncidentStore(options.redis, options.keyPrefix),
      records: new RestartRecords(options.redis, options.keyPrefix),
      events: options.events,
      metrics,
      logger: logger.child({ component: 'instance-restart' }),
      settings,
      stopTimeoutMilliseconds: settings.stopTimeoutMilliseconds,
      startTimeoutMilliseconds: settings.startTimeoutMilliseconds,
      pollMilliseconds: settings.pollMilliseconds,
      sleep: (milliseconds) => new Promise((resolve) => setTimeout(resolve, milliseconds)),
      monotonic: () => performance.now(),
      now: options.now ?? (() => new Date()),
    });
    const worker = new Worker(JOB_QUEUES.instanceRestart, processor.process, {
      connection,
      prefix,
      concurrency: settings.concurrency,
      ...settings.jobLock,
      name: `${options.instanceName}:instance-restart`,
    });
    worker.on('error', (error) => logger.warn({ err: error }, 'BullMQ worker error'));
    worker.on('stalled', (jobId) =>
      logger.warn({ jobId }, 'job taken over from a worker that stopped answering'),
    );
    await worker.waitUntilReady();
    logger.info({ concurrency: settings.concurrency, rule: settings.rule }, 'instance restart worker ready');
    return new InstanceRestartWorker(queue, worker, [producer, connection], metrics, logger);
  }

  /** True while the BullMQ worker runs (readiness). */
  isRunning(): boolean {
    return this.worker.isRunning();
  }

  /**
   * Stops within `budgetMilliseconds`: running jobs may finish; past half the budget the worker is
   * closed by force and its jobs are taken over by another process (they read the server again first).
   */
  async close(budgetMilliseconds: number): Promise<void> {
    const force = setTimeout(
      () => void this.worker.close(true).catch(() => undefined),
      budgetMilliseconds / 2,
    );
    try {
      await withTimeout('close the instance-restart worker', this.worker.close(), budgetMilliseconds);
    } catch (error) {
      this.logger.warn({ err: error }, 'BullMQ worker did not close in time');
    } finally {
      clearTimeout(force);
    }
    await withTimeout('close a queue', this.queue.close(), 1000).catch(() => undefined);
    for (const connection of this.connections) connection.disconnect();
  }
}
