import { JOB_QUEUES } from '@lifeguard/contracts';
import {
  IncidentStore,
  type InstanceHaConfig,
  KdumpStore,
  migrationWindowMinutes,
  PlacementDirectiveStore,
  ReenableWaits,
  waitingSeconds,
} from '@lifeguard/instance-ha';
import type { ComputeApi, IdentityApi, ImageApi } from '@lifeguard/openstack';
import type { RedisClient } from '@lifeguard/runtime';
import {
  type AmqpClient,
  bullmqPrefix,
  FencingTokenGuard,
  type ManagedConsumer,
  redisKey,
  withTimeout,
} from '@lifeguard/runtime';
import { Queue, Worker, type WorkerOptions } from 'bullmq';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { EventSink } from './event-sink.ts';
import { HostPlacement } from './host/host-placement.ts';
import { HostEvacuationProcessor } from './host/host-processor.ts';
import { ReservedHostClaims } from './host/reserved-host-claims.ts';
import { ReservedHostManager } from './host/reserved-host-manager.ts';
import { type HeartbeatTimesSource, heartbeatTimesSource } from './host/safety-checks.ts';
import { StopFlags } from './host/stop-flags.ts';
import { EvacuateClaims } from './instances/evacuate-claims.ts';
import { recheckHost, sharedHostRecheck, sharedWorldRead } from './instances/host-recheck.ts';
import { InstanceEvacuator } from './instances/instance-evacuator.ts';
import { InstanceEvacuationProcessor } from './instances/instance-processor.ts';
import { createEvacuationMetrics, type EvacuationMetrics } from './metrics.ts';
import { startRecoveryIntake } from './recovery/recovery-intake.ts';
import { ReenableProcessor } from './recovery/reenable-processor.ts';
import type { EvacuationWorkerSettings } from './settings.ts';

export interface EvacuationWorkerOptions {
  readonly compute: ComputeApi;
  /** Glance, for evacuable image tags; null without an image endpoint (images are then not considered). */
  readonly image: ImageApi | null;
  /**
   * Keystone, to look up the project names of SKIP_SERVERS_IN_PROJECT; absent or null: those items
   * are matched as project ids only.
   */
  readonly identity?: IdentityApi | null;
  readonly config: InstanceHaConfig;
  readonly settings: EvacuationWorkerSettings;
  /** The deployment's Redis key prefix (LIFEGUARD_REDIS_KEY_PREFIX); BullMQ uses `<prefix>:bull`. */
  readonly keyPrefix: string;
  /** Commands: incidents, kdump state, claims, stop flags. */
  readonly redis: RedisClient;
  /** Opens a dedicated connection: `worker` role (blocking, never gives up) or `producer` (fails fast). */
  connectRedis(role: 'worker' | 'producer', name: string): Promise<RedisClient>;
  readonly events: EventSink;
  readonly logger: Logger;
  readonly registry: Registry;
  /** RabbitMQ for the `host.recovery.requested` intake; null runs no intake (tests add jobs directly). */
  readonly amqp: AmqpClient | null;
  /** This process's name, given to BullMQ workers (shows in `queue.getWorkers()`). */
  readonly instanceName: string;
}

/**
 * The evacuation worker of one process: BullMQ workers for `evacuate-host` parents (concurrency
 * WORKERS), `evacuate-instance` children (concurrency EVACUATION_MAX_THREADS) and `reenable` jobs
 * (concurrency WORKERS), as the roles select, plus the `host.recovery.requested` intake. Any number of
 * processes may run on the same queues; the work spreads over them.
 */
/**
 * Said once at start-up by processes that evacuate hosts: Nova's API does not show a compute host's
 * nova.conf, so lifeguard cannot check this option itself (docs/operations.md).
 */
export const RESUME_GUESTS_REMINDER =
  "Nova's resume_guests_state_on_host_boot must be false in nova.conf on every compute host lifeguard protects: otherwise a fenced host that boots again restarts the guests already evacuated from it (lifeguard cannot read this option through Nova's API)";

export class EvacuationWorker {
  private constructor(
    readonly queues: { evacuation: Queue; evacuationInstance: Queue; fencing: Queue; recovery: Queue },
    private readonly workers: ReadonlyArray<Worker>,
    private readonly intake: ManagedConsumer<unknown> | null,
    private readonly connections: ReadonlyArray<RedisClient>,
    readonly metrics: EvacuationMetrics,
    private readonly logger: Logger,
  ) {}

  static async start(options: EvacuationWorkerOptions): Promise<EvacuationWorker> {
    const { settings, logger } = options;
    const prefix = bullmqPrefix(options.keyPrefix);
    const producer = await options.connectRedis('producer', 'bullmq-producer');
    const connections: RedisClient[] = [producer];
    const queues = openQueues(producer, prefix, logger);
    const parts = workerParts(options, queues);
    const workerOptions = async (name: string, concurrency: number): Promise<WorkerOptions> => {
      const connection = await options.connectRedis('worker', `bullmq-${name}`);
      connections.push(connection);
      return {
        connection,
        prefix,
        concurrency,
        ...settings.jobLock,
        name: `${options.instanceName}:${name}`,
      };
    };
    // Negotiates the microversion and opens a connection before the first host arrives; Nova being
    // unreachable now is not fatal (it is retried per call later).
    try {
      await options.compute.listServices({ binary: 'nova-scheduler' });
    } catch (error) {
      logger.warn({ err: error }, 'Nova did not answer at start-up; evacuations will retry it');
    }
    const workers: Worker[] = [];
    if (settings.roles.includes('hosts')) {
      const processor = hostProcessor(options, parts);
      workers.push(
        new Worker(
          JOB_QUEUES.evacuation,
          processor.process,
          await workerOptions('hosts', settings.hostConcurrency),
        ),
      );
    }
    if (settings.roles.includes('instances')) {
      const processor = instanceProcessor(options, parts);
      workers.push(
        new Worker(
          JOB_QUEUES.evacuationInstance,
          processor.process,
          await workerOptions('instances', settings.instanceConcurrency),
        ),
      );
    }
    let intake: ManagedConsumer<unknown> | null = null;
    if (settings.roles.includes('recovery')) {
      const processor = reenableProcessor(options, parts);
      workers.push(
        new Worker(
          JOB_QUEUES.recovery,
          processor.process,
          await workerOptions('recovery', settings.recoveryConcurrency),
        ),
      );
      intake = await recoveryIntake(options, parts);
    }
    watchWorkers(workers, logger);
    await Promise.all(workers.map((worker) => worker.waitUntilReady()));
    if (settings.roles.includes('hosts')) {
      logger.info({ novaOption: 'resume_guests_state_on_host_boot' }, RESUME_GUESTS_REMINDER);
    }
    logger.info(
      {
        roles: settings.roles,
        mode: settings.mode,
        hostConcurrency: settings.hostConcurrency,
        instanceConcurrency: settings.instanceConcurrency,
        perHostConcurrency: settings.perHostConcurrency,
      },
      'evacuation worker ready',
    );
    return new EvacuationWorker(queues, workers, intake, connections, parts.metrics, logger);
  }

  /** True while every BullMQ worker of this process runs (readiness). */
  isRunning(): boolean {
    return this.workers.every((worker) => worker.isRunning());
  }

  /**
   * Stops within `budgetMilliseconds`: the intake stops consuming, watching jobs are handed back to
   * their queue (they resume in another process), workers close (forced when the budget runs out:
   * BullMQ's close can hang while Redis is unreachable), then queues and connections.
   */
  async close(budgetMilliseconds: number): Promise<void> {
    const started = Date.now();
    const left = () => Math.max(100, budgetMilliseconds - (Date.now() - started));
    if (this.intake)
      await withTimeout('stop the recovery intake', this.intake.stop(), left()).catch(() => undefined);
    for (const worker of this.workers) worker.cancelAllJobs('shutdown');
    await Promise.all(
      this.workers.map(async (worker) => {
        const force = setTimeout(() => void worker.close(true).catch(() => undefined), left() / 2);
        try {
          await withTimeout(`close the ${worker.name} worker`, worker.close(), left());
        } catch (error) {
          this.logger.warn({ err: error }, 'BullMQ worker did not close in time');
        } finally {
          clearTimeout(force);
        }
      }),
    );
    await Promise.all(
      Object.values(this.queues).map((queue) =>
        withTimeout('close a queue', queue.close(), left()).catch(() => undefined),
      ),
    );
    for (const connection of this.connections) connection.disconnect();
  }
}

type WorkerQueues = EvacuationWorker['queues'];

/** What the processors of one process share: queues, stores, metrics, the instance evacuator. */
interface WorkerParts {
  readonly queues: WorkerQueues;
  readonly reenableWaits: ReenableWaits;
  readonly metrics: EvacuationMetrics;
  readonly incidents: IncidentStore;
  readonly stopFlags: StopFlags;
  readonly evacuator: InstanceEvacuator;
  readonly heartbeats: HeartbeatTimesSource;
  readonly reserved: ReservedHostManager;
  /** Where instances go: a Masakari segment's directive, else RESERVED_HOSTS' pool. */
  readonly placement: HostPlacement;
}

/** The four queues this process adds to, on the producer connection; their errors are logged. */
function openQueues(producer: RedisClient, prefix: string, logger: Logger): WorkerQueues {
  const queue = (name: string) => new Queue(name, { connection: producer, prefix });
  const queues = {
    evacuation: queue(JOB_QUEUES.evacuation),
    evacuationInstance: queue(JOB_QUEUES.evacuationInstance),
    fencing: queue(JOB_QUEUES.fencing),
    recovery: queue(JOB_QUEUES.recovery),
  };
  for (const each of Object.values(queues))
    each.on('error', (error) => logger.warn({ err: error }, 'BullMQ queue error'));
  return queues;
}

/** The metrics, stores and instance evacuator (with the evacuation policy) the processors share. */
function workerParts(options: EvacuationWorkerOptions, queues: WorkerQueues): WorkerParts {
  const { config, settings, logger } = options;
  const reenableWaits = new ReenableWaits(options.redis, options.keyPrefix);
  const metrics = createEvacuationMetrics(options.registry, {
    async hostsInProgress() {
      const counts = await queues.evacuation.getJobCounts(
        'active',
        'waiting',
        'delayed',
        'waiting-children',
        'prioritized',
      );
      return Object.values(counts).reduce((sum, count) => sum + count, 0);
    },
    async hostsWaitingForNovaComputeRestart() {
      const now = new Date();
      return (await reenableWaits.list()).filter(
        (wait) => waitingSeconds(wait, now) >= settings.reenableWaitingAlertSeconds,
      ).length;
    },
  });
  const evacuator = new InstanceEvacuator(
    options.compute,
    {
      policy: settings.policy,
      firstCheckMilliseconds: settings.firstCheckMilliseconds,
      pollMilliseconds: settings.pollMilliseconds,
      migrationWindowMinutes: migrationWindowMinutes(config),
    },
    logger.child({ component: 'instance-evacuator' }),
  );
  const reserved = new ReservedHostManager(
    options.compute,
    new ReservedHostClaims(options.redis, options.keyPrefix),
    config,
    logger.child({ component: 'reserved-hosts' }),
  );
  const directives = new PlacementDirectiveStore(options.redis, options.keyPrefix);
  return {
    queues,
    reenableWaits,
    metrics,
    reserved,
    placement: new HostPlacement(options.compute, reserved, directives, config),
    incidents: new IncidentStore(options.redis, options.keyPrefix),
    stopFlags: new StopFlags(options.redis, options.keyPrefix),
    evacuator,
    heartbeats: heartbeatTimesSource(config, options.redis, options.keyPrefix),
  };
}

/** The `evacuate-host` processor (role `hosts`). */
function hostProcessor(options: EvacuationWorkerOptions, parts: WorkerParts): HostEvacuationProcessor {
  const { config, settings, logger } = options;
  return new HostEvacuationProcessor({
    compute: options.compute,
    image: options.image,
    identity: options.identity ?? null,
    config,
    settings,
    incidents: parts.incidents,
    reserved: parts.reserved,
    placement: parts.placement,
    stopFlags: parts.stopFlags,
    events: options.events,
    metrics: parts.metrics,
    logger: logger.child({ component: 'host-evacuation' }),
    instanceQueue: parts.queues.evacuationInstance,
    fencingQueue: parts.queues.fencing,
    evacuator: parts.evacuator,
    heartbeats: parts.heartbeats,
  });
}

/** The `evacuate-instance` processor (role `instances`), re-checking the host before each evacuate. */
function instanceProcessor(
  options: EvacuationWorkerOptions,
  parts: WorkerParts,
): InstanceEvacuationProcessor {
  const { config, settings, logger } = options;
  const world = {
    compute: options.compute,
    incidents: parts.incidents,
    config,
    heartbeats: parts.heartbeats,
  };
  // One read of the world in flight serves the re-checks of every host that ask meanwhile.
  const readWorld = sharedWorldRead(world);
  return new InstanceEvacuationProcessor({
    evacuator: parts.evacuator,
    incidents: parts.incidents,
    stopFlags: parts.stopFlags,
    events: options.events,
    metrics: parts.metrics,
    logger: logger.child({ component: 'instance-evacuation' }),
    policy: settings.policy,
    prepareTarget: (host, data) =>
      parts.placement.prepare(host, data.host, data.incidentId, logger.child({ host: data.host })),
    claims: new EvacuateClaims(
      options.redis,
      options.keyPrefix,
      settings.evacuateClaimMilliseconds,
      options.instanceName,
    ),
    jobLockMilliseconds: settings.jobLock.lockDuration,
    recheckHost: sharedHostRecheck((data) =>
      recheckHost(
        {
          ...world,
          thresholdCheck: settings.thresholdCheck,
          logger: logger.child({ component: 'instance-evacuation', host: data.host }),
          readWorld,
        },
        data,
      ),
    ),
  });
}

/** The `reenable` processor (role `recovery`). */
function reenableProcessor(options: EvacuationWorkerOptions, parts: WorkerParts): ReenableProcessor {
  const { config, settings, logger } = options;
  return new ReenableProcessor({
    compute: options.compute,
    config,
    incidents: parts.incidents,
    kdump: new KdumpStore(options.redis, options.keyPrefix),
    events: options.events,
    metrics: parts.metrics,
    logger: logger.child({ component: 'reenable' }),
    recheckMilliseconds: settings.recheckMilliseconds,
    waits: parts.reenableWaits,
    waitingAlertSeconds: settings.reenableWaitingAlertSeconds,
  });
}

/** The `host.recovery.requested` intake (role `recovery`), or null without RabbitMQ. */
async function recoveryIntake(
  options: EvacuationWorkerOptions,
  parts: WorkerParts,
): Promise<ManagedConsumer<unknown> | null> {
  if (options.amqp === null) return null;
  const guard = FencingTokenGuard.forNodeMonitorLeader(
    options.redis,
    options.keyPrefix,
    redisKey(options.keyPrefix, 'evacuation-worker', 'recovery-fencing-token'),
  );
  return (await startRecoveryIntake(
    options.amqp,
    parts.queues.recovery,
    guard,
    parts.incidents,
    options.logger.child({ component: 'recovery-intake' }),
  )) as ManagedConsumer<unknown>;
}

/** Logs every worker's errors and stalled jobs. */
function watchWorkers(workers: ReadonlyArray<Worker>, logger: Logger): void {
  for (const worker of workers) {
    worker.on('error', (error) => logger.warn({ err: error, queue: worker.name }, 'BullMQ worker error'));
    worker.on('stalled', (jobId) =>
      logger.warn({ jobId, queue: worker.name }, 'job taken over from a worker that stopped answering'),
    );
  }
}
