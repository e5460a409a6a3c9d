import { JOB_NAMES, JOB_QUEUES } from '@lifeguard/contracts';
import { EvacuabilityCache, ExcludedProjects, IncidentStore, KdumpStore } from '@lifeguard/instance-ha';
import type { ComputeApi, IdentityApi, ImageApi } from '@lifeguard/openstack';
import type { RedisClient } from '@lifeguard/runtime';
import {
  ActionClaims,
  type AdminServer,
  type AmqpClient,
  bullmqPrefix,
  DeploymentGeneration,
  type EventPublisher,
  FencingTokenGuard,
  jobLockOptions,
  type Logger,
  redisKey,
  withTimeout,
} from '@lifeguard/runtime';
import { type Job, Queue, UnrecoverableError, Worker } from 'bullmq';
import type { Registry } from 'prom-client';
import type { FenceAgentHooks } from '../drivers/fence-agent-driver.ts';
import type { DriverTiming } from '../drivers/fence-driver.ts';
import { HostFencer } from '../fencing/host-fencer.ts';
import { FailedFenceReconciler } from './failed-fence-reconciler.ts';
import { FenceJob } from './fence-job.ts';
import { FenceRecheck } from './fence-recheck.ts';
import { createFencingMetrics, type FencingMetrics, mergePrometheusText } from './fencing-metrics.ts';
import { HostDownIntake } from './host-down-intake.ts';
import { backoffByErrorKind } from './job-errors.ts';
import { PowerOnJob } from './power-on-job.ts';
import { FENCING_MAX_STALLED_COUNT, type FencingWorkerConfig } from './worker-config.ts';

export interface FencingWorkerOptions {
  config: FencingWorkerConfig;
  amqp: AmqpClient;
  /** Redis for the incident and kdump stores, the token guard and the BullMQ queues. */
  redis: RedisClient;
  /** A Redis connection for the BullMQ worker (`maxRetriesPerRequest: null`, runtime role `worker`). */
  workerRedis: RedisClient;
  keyPrefix: string;
  events: Pick<EventPublisher, 'publish'>;
  compute: ComputeApi;
  /** Keystone, for SKIP_SERVERS_IN_PROJECT's project names in the capacity gate; absent: ids only. */
  identity?: IdentityApi | null;
  /** Glance, for TAGGED_IMAGES in the capacity gate; absent: images are not considered. */
  image?: ImageApi | null;
  logger: Logger;
  registry: Registry;
  /** When given, BullMQ's queue metrics are appended to its `/metrics` and a readiness check is added. */
  admin?: AdminServer;
  /** Tests: driver waits and fence-agent hooks. */
  driverTiming?: DriverTiming;
  fenceAgentHooks?: FenceAgentHooks;
  kdumpPollMilliseconds?: number;
  /** This process's name (LIFEGUARD_INSTANCE_NAME), shown to a run that finds a power-off claim held. */
  instanceName?: string;
}

/**
 * The fencing worker: the `host.down` intake and the BullMQ worker of the `fencing` queue, which runs
 * `fence` jobs (FenceJob) and `power-on` jobs (PowerOnJob) with the configured concurrency, job lock
 * and stalled-job takeover, and the backoff chosen by error kind. With DISABLED (config.yaml or
 * INSTANCEHA_DISABLED=True) events are still turned into jobs but no job runs.
 */
export class FencingWorker {
  private constructor(
    readonly fencingQueue: Queue,
    readonly evacuationQueue: Queue,
    readonly worker: Worker,
    readonly intake: HostDownIntake,
    readonly reconciler: FailedFenceReconciler,
    readonly metrics: FencingMetrics,
    private readonly logger: Logger,
  ) {}

  static async start(options: FencingWorkerOptions): Promise<FencingWorker> {
    const parts = buildParts(options);
    await startParts(options, parts);
    const { fencingQueue, evacuationQueue, worker, intake, reconciler, metrics } = parts;
    return new FencingWorker(
      fencingQueue,
      evacuationQueue,
      worker,
      intake,
      reconciler,
      metrics,
      options.logger,
    );
  }

  /**
   * Stops taking events, lets running jobs finish within `timeoutMilliseconds` (BullMQ's close can
   * hang when Redis is gone; after the budget the jobs are left to the stalled-job takeover), then
   * closes the queues.
   */
  async close(timeoutMilliseconds = 20_000): Promise<void> {
    await this.intake
      .stop()
      .catch((error: unknown) => this.logger.warn({ err: error }, 'intake stop failed'));
    await this.reconciler.stop().catch(() => undefined);
    try {
      await withTimeout('closing the BullMQ worker', this.worker.close(), timeoutMilliseconds);
    } catch (error) {
      this.logger.warn(
        { err: error },
        'BullMQ worker did not close in time; running jobs will be taken over',
      );
    }
    await Promise.all(
      [this.fencingQueue, this.evacuationQueue].map((queue) =>
        withTimeout(`closing queue ${queue.name}`, queue.close(), 5000).catch(() => undefined),
      ),
    );
  }
}

/** What FencingWorker.start builds, then starts. */
interface FencingParts {
  readonly fencingQueue: Queue;
  readonly evacuationQueue: Queue;
  readonly worker: Worker;
  readonly intake: HostDownIntake;
  readonly reconciler: FailedFenceReconciler;
  readonly metrics: FencingMetrics;
}

/** Builds the queues, the BullMQ worker (not running), the intake and the reconciler; starts nothing. */
function buildParts(options: FencingWorkerOptions): FencingParts {
  const { config, logger } = options;
  const { settings } = config;
  const prefix = bullmqPrefix(options.keyPrefix);
  const metrics = createFencingMetrics(options.registry);
  const secrets = config.fencing.secrets();
  const incidents = new IncidentStore(options.redis, options.keyPrefix);
  const fencer = new HostFencer(config.fencing, {
    logger: logger.child({ component: 'fencing' }),
    secrets,
    allowNoop: settings.LIFEGUARD_FENCING_ALLOW_NOOP,
    ipmitoolPath: settings.LIFEGUARD_IPMITOOL_PATH,
    ...(options.driverTiming ? { timing: options.driverTiming } : {}),
    ...(options.fenceAgentHooks ? { fenceAgentHooks: options.fenceAgentHooks } : {}),
  });
  const fencingQueue = new Queue(JOB_QUEUES.fencing, { connection: options.redis, prefix });
  const evacuationQueue = new Queue(JOB_QUEUES.evacuation, { connection: options.redis, prefix });
  const processor = jobProcessor(options, { incidents, fencer, metrics, secrets, evacuationQueue });
  const worker = createWorker(options, prefix, processor);
  const intake = new HostDownIntake({
    amqp: options.amqp,
    queue: fencingQueue,
    guard: FencingTokenGuard.forNodeMonitorLeader(
      options.redis,
      options.keyPrefix,
      redisKey(options.keyPrefix, 'fencing-worker', 'highest-fencing-token'),
    ),
    incidents,
    logger: logger.child({ component: 'intake' }),
    metrics,
    attempts: settings.LIFEGUARD_FENCING_ATTEMPTS,
  });
  const reconciler = new FailedFenceReconciler({
    queue: fencingQueue,
    incidents,
    logger: logger.child({ component: 'reconciler' }),
    intervalSeconds: settings.LIFEGUARD_FENCING_RECONCILE_SECONDS,
    retryFailedAfterSeconds: settings.LIFEGUARD_FENCING_RETRY_FAILED_AFTER_SECONDS,
    onAwaitingOperator: (count) => metrics.awaitingOperator.set(count),
  });
  return { fencingQueue, evacuationQueue, worker, intake, reconciler, metrics };
}

/** The processor of the `fencing` queue: `fence` jobs to FenceJob, `power-on` jobs to PowerOnJob. */
function jobProcessor(
  options: FencingWorkerOptions,
  shared: {
    incidents: IncidentStore;
    fencer: HostFencer;
    metrics: FencingMetrics;
    secrets: string[];
    evacuationQueue: Queue;
  },
): (job: Job, token?: string) => Promise<unknown> {
  const { incidents, fencer, metrics, secrets, evacuationQueue } = shared;
  const { logger } = options;
  const ha = options.config.instanceHa.config;
  const fenceJob = new FenceJob({
    incidents,
    kdump: new KdumpStore(options.redis, options.keyPrefix),
    fencer,
    compute: options.compute,
    events: options.events,
    evacuationQueue,
    redis: options.redis,
    keyPrefix: options.keyPrefix,
    logger,
    metrics,
    secrets,
    checkKdump: ha.checkKdump,
    kdumpTimeoutSeconds: ha.kdumpTimeoutSeconds,
    recheck: new FenceRecheck({
      compute: options.compute,
      incidents,
      events: options.events,
      redis: options.redis,
      keyPrefix: options.keyPrefix,
      config: ha,
      ...(options.identity
        ? { excludedProjects: new ExcludedProjects(options.identity, ha.skipServersInProject, logger) }
        : {}),
      evacuability: new EvacuabilityCache(options.compute, options.image ?? null, ha, logger),
    }),
    deferSeconds: ha.pollSeconds,
    generation: new DeploymentGeneration(options.redis, options.keyPrefix),
    claims: new ActionClaims(options.redis),
    processName: options.instanceName ?? 'fencing-worker',
    jobLockMilliseconds: jobLockOptions(options.config.settings, FENCING_MAX_STALLED_COUNT).lockDuration,
    ...(options.kdumpPollMilliseconds === undefined
      ? {}
      : { kdumpPollMilliseconds: options.kdumpPollMilliseconds }),
  });
  const powerOnJob = new PowerOnJob({ incidents, fencer, events: options.events, logger, metrics, secrets });
  return async (job: Job, token?: string) => {
    if (job.name === JOB_NAMES.fence) return fenceJob.run(job, token);
    if (job.name === JOB_NAMES.powerOn) return powerOnJob.run(job);
    throw new UnrecoverableError(`the fencing queue has no job named "${job.name}"`);
  };
}

/**
 * The BullMQ worker of the `fencing` queue, not running yet: the configured concurrency, job lock and
 * stalled-job takeover, and the backoff chosen by error kind; its errors and takeovers are logged.
 */
function createWorker(
  options: FencingWorkerOptions,
  prefix: string,
  processor: (job: Job, token?: string) => Promise<unknown>,
): Worker {
  const { config, logger } = options;
  const { settings } = config;
  const worker = new Worker(JOB_QUEUES.fencing, processor, {
    connection: options.workerRedis,
    prefix,
    concurrency: config.concurrency,
    ...jobLockOptions(settings, FENCING_MAX_STALLED_COUNT),
    settings: {
      backoffStrategy: backoffByErrorKind(
        settings.LIFEGUARD_FENCING_BACKOFF_SECONDS,
        settings.LIFEGUARD_FENCING_MAX_BACKOFF_SECONDS,
      ),
    },
    autorun: false,
  });
  worker.on('error', (error) => logger.warn({ err: error }, 'BullMQ worker error'));
  worker.on('stalled', (jobId) =>
    logger.warn({ jobId }, 'job taken over from a worker that stopped answering'),
  );
  return worker;
}

/**
 * Starts the parts: the queues ready, the intake taking events, then (unless DISABLED) the worker and
 * the reconciler; adds the queues' metrics and the readiness check to the admin server.
 */
async function startParts(options: FencingWorkerOptions, parts: FencingParts): Promise<void> {
  const { config, logger } = options;
  const { fencingQueue, evacuationQueue, worker, intake, reconciler } = parts;
  const ha = config.instanceHa.config;
  await Promise.all([fencingQueue.waitUntilReady(), evacuationQueue.waitUntilReady()]);
  await intake.start();
  if (ha.disabled) {
    logger.warn('DISABLED is true: host.down events are stored as fence jobs, but no fencing runs');
  } else {
    void worker.run().catch((error: unknown) => logger.error({ err: error }, 'BullMQ worker stopped'));
    await worker.waitUntilReady();
    reconciler.start();
  }
  const labels = { service: 'fencing-worker' };
  options.admin?.addMetricsText(async () =>
    mergePrometheusText([
      await fencingQueue.exportPrometheusMetrics(labels),
      await evacuationQueue.exportPrometheusMetrics(labels),
    ]),
  );
  options.admin?.addReadiness({ name: 'fencing-worker', check: () => ha.disabled || worker.isRunning() });
  logger.info(
    {
      hosts: config.fencing.hosts.length,
      concurrency: config.concurrency,
      attempts: config.settings.LIFEGUARD_FENCING_ATTEMPTS,
      checkKdump: ha.checkKdump,
      disabled: ha.disabled,
    },
    'fencing worker running',
  );
}
