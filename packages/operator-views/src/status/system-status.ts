import { hostname } from 'node:os';
import { DEAD_LETTER_QUEUE, JOB_QUEUES, QUEUES, WORKER_KINDS, type WorkerKind } from '@lifeguard/contracts';
import {
  type AdmissionSummary,
  AdmissionSummaryStore,
  type FailedPoll,
  type Incident,
} from '@lifeguard/instance-ha';
import type { RedisClient } from '@lifeguard/runtime';
import {
  type AmqpClient,
  bullmqPrefix,
  EventJournal,
  LeaderLease,
  type LeaseHolder,
  type ListedWorker,
  nodeMonitorLeaderKey,
  WorkerRegistry,
} from '@lifeguard/runtime';
import { Queue } from 'bullmq';
import { type CapacityHold, capacityHoldOf } from '../incidents/capacity-hold.ts';
import type { OperatorConnections } from '../operator-connections.ts';

/** BullMQ job states counted per queue, in the order the table shows them. */
export const JOB_STATES = [
  'waiting',
  'prioritized',
  'active',
  'delayed',
  'waiting-children',
  'failed',
  'completed',
] as const;
export type JobState = (typeof JOB_STATES)[number];

/** A registered process and what its `/readyz` answered (`not-probed` when it is on another machine). */
export type WorkerStatus = ListedWorker & {
  readonly readiness: 'ready' | 'not-ready' | 'unreachable' | 'not-probed';
};

export interface JobQueueDepth {
  readonly queue: string;
  readonly counts: Readonly<Record<JobState, number>>;
}

export interface BrokerQueueDepth {
  readonly queue: string;
  /** False when the queue was never declared (no worker that owns it has started yet). */
  readonly declared: boolean;
  /** Messages ready for delivery (RabbitMQ's passive declare counts ready messages only). */
  readonly messages: number | null;
  readonly consumers: number | null;
}

/** Whether a kind of worker (WORKER_KINDS, in that order) has a live process. */
export interface WorkerKindStatus {
  readonly kind: WorkerKind;
  /**
   * Its live processes: registered ones whose health server answers or cannot be asked from here
   * (`not-probed`); for `port-status`, the consumers of its queue. Null when it could not be told.
   */
  readonly live: number | null;
  /** True when no process of this kind is live: its work is not being done. Null when unknown. */
  readonly missing: boolean | null;
  /** Why: the live instances, `no live process registered`, `no consumer on <queue>`, ... */
  readonly detail: string;
}

export interface SystemStatus {
  readonly workers: ReadonlyArray<WorkerStatus>;
  /** Every kind of worker (WORKER_KINDS) and whether it has a live process. */
  readonly workerKinds: ReadonlyArray<WorkerKindStatus>;
  /** The node monitors' lease (`<prefix>:node-monitor:leader`) and who holds it, or null. */
  readonly leaderKey: string;
  readonly leader: LeaseHolder | null;
  readonly jobQueues: ReadonlyArray<JobQueueDepth>;
  /** Null when RabbitMQ could not be reached (`brokerError` says why). */
  readonly brokerQueues: ReadonlyArray<BrokerQueueDepth> | null;
  readonly brokerError: string | null;
  readonly openIncidents: ReadonlyArray<Incident>;
  /** What the node-monitor leader's last poll held back (gates, held hosts), or null when none is kept. */
  readonly admission: AdmissionSummary | null;
  /** The leader's last failed poll while it is kept (a few polls), or null. */
  readonly failedPoll: FailedPoll | null;
  /** Open incidents whose fence the fencing worker holds back because their servers have nowhere to go. */
  readonly capacityHolds: ReadonlyArray<{
    readonly incidentId: string;
    readonly host: string;
    readonly hold: CapacityHold;
  }>;
}

const LOOPBACK = /^(127\.|::1$|localhost$)/;

/** Asks a worker's `/readyz` (one second at most) when its health server can be reached from here. */
export async function probeReadiness(worker: ListedWorker): Promise<WorkerStatus['readiness']> {
  const sameMachine = worker.host === hostname();
  const wildcard = worker.httpHost === '0.0.0.0' || worker.httpHost === '::';
  if (!sameMachine && (LOOPBACK.test(worker.httpHost) || wildcard)) return 'not-probed';
  const address = wildcard ? '127.0.0.1' : worker.httpHost;
  const host = address.includes(':') ? `[${address}]` : address;
  try {
    const response = await fetch(`http://${host}:${worker.httpPort}/readyz`, {
      signal: AbortSignal.timeout(1000),
    });
    await response.body?.cancel();
    return response.ok ? 'ready' : 'not-ready';
  } catch {
    return 'unreachable';
  }
}

/** Job counts per state of each of lifeguard's BullMQ queues (`<prefix>:bull:<queue>`). */
export async function jobQueueDepths(redis: RedisClient, keyPrefix: string): Promise<JobQueueDepth[]> {
  const names = [
    JOB_QUEUES.fencing,
    JOB_QUEUES.evacuation,
    JOB_QUEUES.evacuationInstance,
    JOB_QUEUES.recovery,
    JOB_QUEUES.instanceRestart,
  ];
  return Promise.all(
    names.map(async (name) => {
      const queue = new Queue(name, { connection: redis, prefix: bullmqPrefix(keyPrefix) });
      try {
        const counts = await queue.getJobCounts(...JOB_STATES);
        return {
          queue: name,
          counts: Object.fromEntries(JOB_STATES.map((state) => [state, counts[state] ?? 0])) as Record<
            JobState,
            number
          >,
        };
      } finally {
        await queue.close();
      }
    }),
  );
}

/**
 * Ready messages and consumers of each of lifeguard's RabbitMQ queues and of the dead-letter queue,
 * by passive declaration (no management API needed; a queue never declared shows as such).
 */
export async function brokerQueueDepths(amqp: AmqpClient): Promise<BrokerQueueDepth[]> {
  const names = [...Object.values(QUEUES), DEAD_LETTER_QUEUE];
  const depths: BrokerQueueDepth[] = [];
  for (const queue of names) {
    try {
      const answer = await amqp.withChannel((channel) => channel.checkQueue(queue));
      depths.push({ queue, declared: true, messages: answer.messageCount, consumers: answer.consumerCount });
    } catch (error) {
      if (/NOT_FOUND|404/.test((error as Error).message)) {
        depths.push({ queue, declared: false, messages: null, consumers: null });
      } else throw error;
    }
  }
  return depths;
}

/**
 * Whether each kind of worker has a live process. A registered process counts unless its health
 * server, on this machine, does not answer (`unreachable`: it died and its record has not expired yet).
 * The port-status subscriber is judged by the consumers of its queue, as it may run inside
 * provisioning-blocks; without RabbitMQ (`brokerQueues` null) only a process registered as
 * `port-status` tells.
 */
export function workerKindStatuses(
  workers: ReadonlyArray<WorkerStatus>,
  brokerQueues: ReadonlyArray<BrokerQueueDepth> | null,
): WorkerKindStatus[] {
  return WORKER_KINDS.map((kind): WorkerKindStatus => {
    const registered = workers.filter((worker) => worker.service === kind);
    const live = registered.filter((worker) => worker.readiness !== 'unreachable');
    if (kind === 'port-status') {
      const queue = QUEUES.provisioningComplete;
      const depth = brokerQueues?.find((each) => each.queue === queue);
      if (depth === undefined) {
        return live.length > 0
          ? { kind, live: live.length, missing: false, detail: live.map((each) => each.instance).join(', ') }
          : { kind, live: null, missing: null, detail: 'unknown: RabbitMQ could not be read' };
      }
      const consumers = depth.consumers ?? 0;
      return {
        kind,
        live: consumers,
        missing: consumers === 0,
        detail:
          consumers > 0
            ? `consumers on ${queue}`
            : `no consumer on ${queue}${depth.declared ? '' : ' (not declared)'}`,
      };
    }
    if (live.length > 0) {
      return {
        kind,
        live: live.length,
        missing: false,
        detail: live.map((each) => each.instance).join(', '),
      };
    }
    return {
      kind,
      live: 0,
      missing: true,
      detail:
        registered.length === 0
          ? 'no live process registered'
          : `${registered.length} registered, none answers on its health server`,
    };
  });
}

/**
 * Everything `lifeguard status` shows. RabbitMQ is optional: without it (`amqp` rejects) the queue
 * depths are null and `brokerError` holds the reason, so the rest still shows.
 */
export async function systemStatus(options: {
  redis: RedisClient;
  amqp: Promise<AmqpClient>;
  keyPrefix: string;
  openIncidents: () => Promise<Incident[]>;
}): Promise<SystemStatus> {
  const { redis, amqp, keyPrefix } = options;
  const listed = await new WorkerRegistry(redis, keyPrefix).list();
  const leaderKey = nodeMonitorLeaderKey(keyPrefix);
  const summaries = new AdmissionSummaryStore(redis, keyPrefix);
  const [workers, leader, jobQueues, brokerQueues, openIncidents, admission, failedPoll] = await Promise.all([
    Promise.all(listed.map(async (worker) => ({ ...worker, readiness: await probeReadiness(worker) }))),
    LeaderLease.read(redis, leaderKey),
    jobQueueDepths(redis, keyPrefix),
    amqp.then(brokerQueueDepths).then(
      (depths) => ({ depths, error: null }),
      (error: unknown) => ({ depths: null, error: error instanceof Error ? error.message : String(error) }),
    ),
    options.openIncidents(),
    summaries.read(),
    summaries.readFailure(),
  ]);
  return {
    capacityHolds: await capacityHolds(redis, keyPrefix, openIncidents),
    workers,
    workerKinds: workerKindStatuses(workers, brokerQueues.depths),
    leaderKey,
    leader,
    jobQueues,
    brokerQueues: brokerQueues.depths,
    brokerError: brokerQueues.error,
    openIncidents,
    admission,
    failedPoll,
  };
}

/** The capacity holds of the open incidents not fenced yet, from their events (one journal read each). */
async function capacityHolds(
  redis: RedisClient,
  keyPrefix: string,
  incidents: ReadonlyArray<Incident>,
): Promise<SystemStatus['capacityHolds']> {
  const journal = new EventJournal(redis, keyPrefix);
  const waiting = incidents.filter((incident) => incident.state === 'open' && incident.fence === null);
  const holds = await Promise.all(
    waiting.map(async (incident) => ({
      incidentId: incident.id,
      host: incident.host,
      hold: capacityHoldOf(incident.state, await journal.incident(incident.id)),
    })),
  );
  return holds.flatMap((each) => (each.hold === null ? [] : [{ ...each, hold: each.hold }]));
}

/**
 * Reads the system status through an operator tool's connections (`lifeguard status`, the console's
 * queues page): Redis must answer; RabbitMQ need not (then `brokerError` says why its queues are
 * missing).
 */
export async function readSystemStatus(
  connections: Pick<OperatorConnections, 'redis' | 'amqp' | 'incidents' | 'keyPrefix'>,
): Promise<SystemStatus> {
  const amqp = connections.amqp();
  amqp.catch(() => undefined);
  const [redis, incidents] = await Promise.all([connections.redis(), connections.incidents()]);
  return systemStatus({
    redis,
    amqp,
    keyPrefix: connections.keyPrefix,
    openIncidents: () => incidents.listOpen(),
  });
}
