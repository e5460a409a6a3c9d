import { JOB_QUEUES } from '@lifeguard/contracts';
import {
  IncidentStore,
  type InstanceHaConfig,
  MonitorReportStore,
  PlacementDirectiveStore,
} from '@lifeguard/instance-ha';
import { MASAKARI_NOTIFICATION_QUEUE, MasakariStore } from '@lifeguard/masakari-api';
import type { ComputeApi } from '@lifeguard/openstack';
import { bullmqPrefix, EventJournal, type Logger, type RedisClient, withTimeout } from '@lifeguard/runtime';
import { Queue, Worker } from 'bullmq';
import type { Registry } from 'prom-client';
import { HostFailureHandler } from './handlers/host-failure.ts';
import { InstanceFailureHandler } from './handlers/instance-failure.ts';
import { ProcessFailureHandler } from './handlers/process-failure.ts';
import { createMasakariEngineMetrics, type MasakariEngineMetrics } from './metrics.ts';
import { NotificationJob } from './notification-job.ts';
import type { MasakariEngineSettings } from './settings.ts';

export interface MasakariEngineOptions {
  readonly settings: MasakariEngineSettings;
  readonly config: Pick<InstanceHaConfig, 'disabled'>;
  /** Redis for the stores and the `instance-restart` queue. */
  readonly redis: RedisClient;
  /** A Redis connection for the BullMQ worker (`maxRetriesPerRequest: null`, runtime role `worker`). */
  readonly workerRedis: RedisClient;
  readonly keyPrefix: string;
  readonly compute: Pick<ComputeApi, 'listServices' | 'updateService'>;
  readonly logger: Logger;
  readonly registry: Registry;
}

/**
 * The Masakari engine: the BullMQ worker of the `masakari-notification` queue, which the masakari-api
 * worker fills with one job per accepted notification. Each job (NotificationJob) acts on its
 * notification in lifeguard's way and keeps its status in the masakari-api store.
 */
export class MasakariEngine {
  private constructor(
    readonly worker: Worker,
    readonly restartQueue: Queue,
    readonly metrics: MasakariEngineMetrics,
    private readonly logger: Logger,
  ) {}

  static async start(options: MasakariEngineOptions): Promise<MasakariEngine> {
    const { settings, logger, redis, keyPrefix } = options;
    const prefix = bullmqPrefix(keyPrefix);
    const metrics = createMasakariEngineMetrics(options.registry);
    const store = new MasakariStore({ redis, keyPrefix });
    const restartQueue = new Queue(JOB_QUEUES.instanceRestart, { connection: redis, prefix });
    const watch = { watchMilliseconds: settings.watchMilliseconds };
    const job = new NotificationJob({
      store,
      hostFailure: new HostFailureHandler({
        reports: new MonitorReportStore(redis, keyPrefix),
        incidents: new IncidentStore(redis, keyPrefix),
        journal: new EventJournal(redis, keyPrefix),
        directives: new PlacementDirectiveStore(redis, keyPrefix),
        store,
        logger,
        verdictTimeoutMilliseconds: settings.verdictTimeoutMilliseconds,
        recoveryTimeoutMilliseconds: settings.recoveryTimeoutMilliseconds,
        ...watch,
      }),
      instanceFailure: new InstanceFailureHandler({
        queue: restartQueue,
        logger,
        timeoutMilliseconds: settings.instanceRestartTimeoutMilliseconds,
        ...watch,
      }),
      processFailure: new ProcessFailureHandler({
        compute: options.compute,
        logger,
        serviceUpdateTimeoutMilliseconds: settings.serviceUpdateTimeoutMilliseconds,
        ...watch,
      }),
      metrics,
      logger,
      retryMilliseconds: settings.retryMilliseconds,
    });
    const worker = new Worker(MASAKARI_NOTIFICATION_QUEUE, (each, token) => job.run(each, token), {
      connection: options.workerRedis,
      prefix,
      concurrency: settings.concurrency,
      ...settings.jobLock,
      autorun: false,
    });
    worker.on('error', (error) => logger.warn({ err: error }, 'BullMQ worker error'));
    worker.on('failed', (failed, error) =>
      logger.error({ err: error, jobId: failed?.id }, 'masakari-notification job failed'),
    );
    worker.on('stalled', (jobId) =>
      logger.warn({ jobId }, 'job taken over from a worker that stopped answering'),
    );
    await restartQueue.waitUntilReady();
    if (options.config.disabled) {
      logger.warn('DISABLED is true: notifications stay queued, none is processed');
    } else {
      void worker.run().catch((error: unknown) => logger.error({ err: error }, 'BullMQ worker stopped'));
      await worker.waitUntilReady();
    }
    logger.info(
      { concurrency: settings.concurrency, disabled: options.config.disabled },
      'masakari engine running',
    );
    return new MasakariEngine(worker, restartQueue, metrics, logger);
  }

  isRunning(): boolean {
    return this.worker.isRunning();
  }

  /**
   * Stops taking jobs and lets running ones finish within `timeoutMilliseconds`; after that they are
   * left to the stalled-job takeover (every handler is safe to run again).
   */
  async close(timeoutMilliseconds = 20_000): Promise<void> {
    try {
      await withTimeout('closing the BullMQ worker', this.worker.close(), timeoutMilliseconds);
    } catch (error) {
      this.logger.warn(
        { err: error },
        'BullMQ worker did not close in time; running jobs will be taken over',
      );
    }
    await withTimeout('closing the instance-restart queue', this.restartQueue.close(), 5000).catch(
      () => undefined,
    );
  }
}
