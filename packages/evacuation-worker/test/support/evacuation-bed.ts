import { after } from 'node:test';
import { type CloudSim, type CloudSimOptions, startCloudSim } from '@lifeguard/cloud-sim';
import {
  createEvent,
  type EvacuateHostJobData,
  type EvacuateHostJobResult,
  type EvacuateInstanceJobData,
  type EventData,
  evacuateHostJobId,
  evacuateInstanceJobId,
  JOB_NAMES,
  JOB_QUEUES,
  type LifeguardEvent,
  type LifeguardEventType,
} from '@lifeguard/contracts';
import {
  formatDisabledReason,
  type Incident,
  IncidentStore,
  type InstanceHaConfig,
  loadInstanceHaConfig,
  parseNovaTimestamp,
} from '@lifeguard/instance-ha';
import {
  type CloudConfig,
  type ComputeApi,
  createOpenStackClients,
  type NovaClient,
} from '@lifeguard/openstack';
import {
  type AmqpClient,
  bullmqPrefix,
  connectRedis,
  createLogger,
  createMetricsRegistry,
  type RedisClient,
} from '@lifeguard/runtime';
import {
  CapturedLines,
  deleteKeysWithPrefix,
  hostDownEvidence,
  REDIS_URL,
  randomKeyPrefix,
  testRedis,
  waitFor,
} from '@lifeguard/testing';
import { type Job, type JobsOptions, Queue, UnrecoverableError, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Registry } from 'prom-client';
import { EvacuationWorker, type EventSink, loadEvacuationWorkerSettings } from '../../src/index.ts';

/** Records events in memory, validated exactly as the EventPublisher would. */
export class RecordedEvents implements EventSink {
  readonly events: LifeguardEvent[] = [];

  async publish<Type extends LifeguardEventType>(type: Type, data: EventData<Type>): Promise<unknown> {
    const event = createEvent(type, data, { service: 'evacuation-worker', instance: 'test' });
    this.events.push(event);
    return event;
  }

  of<Type extends LifeguardEventType>(type: Type): Array<Extract<LifeguardEvent, { type: Type }>> {
    return this.events.filter((event) => event.type === type) as Array<
      Extract<LifeguardEvent, { type: Type }>
    >;
  }
}

/** Connection options for a BullMQ worker on the test Redis. */
export function workerConnection() {
  const url = new URL(REDIS_URL);
  return { host: url.hostname, port: Number(url.port || 6379), maxRetriesPerRequest: null };
}

/** A cloud configuration pointing @lifeguard/openstack at the simulated cloud (admin token, no Keystone). */
export function cloudConfigFor(sim: CloudSim): CloudConfig {
  return {
    name: 'cloud-sim',
    source: 'test',
    authType: 'admin_token',
    auth: { token: 'admin:admin' },
    regionName: null,
    interface: 'public',
    endpointOverrides: { compute: sim.urls.compute, image: sim.urls.image, identity: sim.urls.identity },
    apiTimeoutSeconds: null,
  } as CloudConfig;
}

/** Short timings for tests: InstanceHA's keys (allowed below their minimum) and lifeguard's. */
export const FAST_WORKER_ENVIRONMENT: Record<string, string> = {
  LIFEGUARD_EVACUATION_FIRST_CHECK_SECONDS: '0.05',
  LIFEGUARD_EVACUATION_POLL_SECONDS: '0.05',
  LIFEGUARD_EVACUATION_RECHECK_SECONDS: '0.2',
  LIFEGUARD_JOB_LOCK_SECONDS: '3',
  LIFEGUARD_JOB_STALLED_CHECK_SECONDS: '1',
};

export interface BedOptions {
  /** cloud-sim options (hosts, servers, model). */
  readonly cloud?: CloudSimOptions;
  /** InstanceHA config.yaml keys (as strings), e.g. `{ SMART_EVACUATION: 'true' }`. */
  readonly instanceHa?: Record<string, string>;
  /** The in-process worker's own environment variables, over FAST_WORKER_ENVIRONMENT. */
  readonly workerEnvironment?: Record<string, string>;
  /** Run an evacuation worker in this process (default true). */
  readonly inProcessWorker?: boolean;
  /**
   * Redis of the bed instead of the test Redis and a fresh prefix (the benchmark's Redis Cluster):
   * `connect` makes a client usable by BullMQ workers (maxRetriesPerRequest null), `prefix` is the key
   * prefix ({hash-tagged} on a Redis Cluster). The caller owns that Redis: close() deletes no key there.
   * Only for beds without an in-process worker (its connections go to the test Redis).
   */
  readonly redis?: { readonly connect: () => RedisClient; readonly prefix: string };
}

/**
 * A test bed: cloud-sim, a Redis prefix, an in-process evacuation worker (optional), a stand-in for
 * the fencing worker (it fences by switching the simulated BMC off and marking Nova as the fencing
 * worker does, records the incident's fence, hands the host over with one `evacuate-host` job, and
 * processes `power-on` jobs), and recorded events and log lines.
 */
export class EvacuationBed {
  readonly events = new RecordedEvents();
  readonly logs = new CapturedLines();
  readonly powerOnRequests: string[] = [];
  worker: EvacuationWorker | null = null;
  /** Every worker started in this process, closed with the bed. */
  private readonly workers: EvacuationWorker[] = [];
  /** The metrics registry of the last worker started in this process. */
  registry: Registry | null = null;
  private readonly extra: Array<{ close(): Promise<void> }> = [];

  private constructor(
    readonly sim: CloudSim,
    readonly nova: NovaClient,
    readonly redis: RedisClient,
    readonly prefix: string,
    readonly incidents: IncidentStore,
    readonly evacuationQueue: Queue,
    readonly config: InstanceHaConfig,
    readonly options: BedOptions,
  ) {}

  static async start(options: BedOptions = {}): Promise<EvacuationBed> {
    const sim = await startCloudSim({
      redfishPort: false,
      hosts: 4,
      ...options.cloud,
      model: {
        reportIntervalSeconds: 1,
        serviceDownTimeSeconds: 3,
        ...options.cloud?.model,
        evacuation: { acceptMilliseconds: 0, rebuildMilliseconds: 150, ...options.cloud?.model?.evacuation },
      },
    });
    const nova = createOpenStackClients({ config: cloudConfigFor(sim) }).compute;
    if (options.redis && (options.inProcessWorker ?? true))
      throw new Error('a bed on a Redis of its own runs its workers as processes (inProcessWorker: false)');
    const redis = options.redis?.connect() ?? testRedis();
    const prefix = options.redis?.prefix ?? randomKeyPrefix('evacuation');
    const { config } = loadInstanceHaConfig({
      path: '/nonexistent/config.yaml',
      env: { TAGGED_AGGREGATES: 'false', EVACUATION_TIMEOUT: '20', ...options.instanceHa },
      allowBelowMinimum: true,
    });
    const evacuationQueue = new Queue(JOB_QUEUES.evacuation, {
      connection: redis,
      prefix: bullmqPrefix(prefix),
    });
    const bed = new EvacuationBed(
      sim,
      nova,
      redis,
      prefix,
      new IncidentStore(redis, prefix),
      evacuationQueue,
      config,
      options,
    );
    bed.startPowerOnStandIn();
    if (options.inProcessWorker ?? true) await bed.startWorker(options.workerEnvironment);
    return bed;
  }

  /**
   * The fencing worker's side of `power-on` jobs: powers the simulated host on through its BMC; a BMC
   * made unreachable (`sim.setBmcQuirks(host, { unreachable: true })`, the control API's
   * `PUT /hosts/<host>/bmc`) fails the job for good, as the fencing worker's last attempt does.
   */
  private startPowerOnStandIn(): void {
    const connection = this.options.redis?.connect();
    const worker = new Worker(
      JOB_QUEUES.fencing,
      async (job: Job) => {
        if (job.name !== JOB_NAMES.powerOn) return null;
        const { host } = job.data as { host: string };
        this.powerOnRequests.push(host);
        if (this.sim.model.host(host).bmc.unreachable)
          throw new UnrecoverableError(`the BMC of ${host} is unreachable`);
        this.sim.model.powerOn(host);
        return { host, poweredOn: true };
      },
      {
        connection: connection ?? workerConnection(),
        prefix: bullmqPrefix(this.prefix),
        concurrency: 4,
      },
    );
    worker.on('error', () => undefined);
    this.extra.push({
      close: async () => {
        await worker.close(true);
        connection?.disconnect();
      },
    });
  }

  /**
   * Starts an evacuation worker in this process with the bed's configuration; `as.compute` replaces
   * its Nova client, `as.name` is its instance name (on its log lines as `worker`).
   */
  async startWorker(
    environment: Record<string, string> = {},
    amqp: AmqpClient | null = null,
    as: { compute?: ComputeApi; name?: string } = {},
  ): Promise<EvacuationWorker> {
    const root = createLogger({ service: 'evacuation-worker', level: 'info', destination: this.logs });
    const logger = as.name === undefined ? root : root.child({ worker: as.name });
    const settings = loadEvacuationWorkerSettings(this.config, [
      { name: 'environment', values: { ...FAST_WORKER_ENVIRONMENT, ...environment } },
    ]);
    const settingsRedis = { url: REDIS_URL, keyPrefix: this.prefix };
    const clients = createOpenStackClients({ config: cloudConfigFor(this.sim) });
    this.registry = createMetricsRegistry('evacuation-worker');
    this.worker = await EvacuationWorker.start({
      compute: as.compute ?? clients.compute,
      image: clients.image,
      identity: clients.identity,
      config: this.config,
      settings,
      keyPrefix: this.prefix,
      redis: this.redis,
      connectRedis: (role, name) => connectRedis(settingsRedis, role, name, logger),
      events: this.events,
      logger,
      registry: this.registry,
      amqp,
      instanceName: as.name ?? 'test-worker',
    });
    this.workers.push(this.worker);
    return this.worker;
  }

  /** The service of a host as Nova lists it. */
  async service(host: string) {
    const [service] = await this.nova.listServices({ binary: 'nova-compute', host });
    if (!service) throw new Error(`no service for ${host}`);
    return service;
  }

  /**
   * What the node monitor and the fencing worker do before evacuation: the host's nova-compute dies,
   * an incident opens, the BMC switches the host off (fence recorded unless `fence: false`), Nova is
   * marked (`forced_down`, then disabled with the evacuation marker), and one `evacuate-host` job is
   * added with the deterministic id.
   */
  async failHost(
    host: string,
    options: {
      /** Record the fence in the incident (default true). */
      fence?: boolean;
      kdump?: boolean;
      resume?: boolean;
      /** Kill the host's nova-compute (default true). */
      kill?: boolean;
      /** Mark Nova: forced_down and the evacuation marker (default true). */
      markNova?: boolean;
      /** Hand over with this incident id instead (a job for another host's incident). */
      incidentId?: string;
      /** Add the `evacuate-host` job (default true; false: the caller adds it). */
      addJob?: boolean;
    } = {},
  ): Promise<{ incident: Incident; jobId: string; data: EvacuateHostJobData }> {
    if (options.kill ?? true) this.sim.killHost(host);
    const service = await this.service(host);
    const { incident } = await this.incidents.openIncident({
      host,
      serviceId: service.id,
      fencingToken: 1,
      kdumpFenced: options.kdump ?? false,
      evidence: hostDownEvidence(service.id, {
        zone: service.zone ?? null,
        updatedAt: service.updated_at
          ? (parseNovaTimestamp(service.updated_at)?.toISOString() ?? null)
          : null,
      }),
    });
    const fencedAt = new Date().toISOString();
    if (options.fence ?? true) {
      if (!options.kdump) this.sim.model.powerOff(host);
      await this.incidents.recordFence(incident.id, {
        proof: options.kdump ? 'kdump' : 'power-off-confirmed',
        method: options.kdump ? 'kdump' : 'redfish',
        at: fencedAt,
        by: null,
        note: null,
      });
    }
    if (options.markNova ?? true) {
      await this.nova.updateService(service.id, { forced_down: true });
      await this.nova.updateService(service.id, {
        status: 'disabled',
        disabled_reason: formatDisabledReason({
          kind: 'evacuating',
          kdump: options.kdump ?? false,
          incidentId: incident.id,
        }),
      });
    }
    const data: EvacuateHostJobData = {
      host,
      serviceId: service.id,
      incidentId: options.incidentId ?? incident.id,
      kdumpFenced: options.kdump ?? false,
      resume: options.resume ?? false,
      fencedAt,
    };
    const jobId = evacuateHostJobId(host, data.incidentId);
    if (options.addJob ?? true) await this.evacuationQueue.add(JOB_NAMES.evacuateHost, data, { jobId });
    return { incident: (await this.incidents.get(incident.id))!, jobId, data };
  }

  /**
   * Adds the `evacuate-instance` job the host job would add for an ACTIVE `server` of `host` in
   * `incidentId` (phase 0, no target host), to a Queue of its own, which the caller closes.
   */
  async addInstanceJob(
    host: string,
    server: { id: string; name: string },
    incidentId: string,
    options: JobsOptions = {},
  ): Promise<{ queue: Queue; jobId: string }> {
    const queue = new Queue(JOB_QUEUES.evacuationInstance, {
      connection: this.redis,
      prefix: bullmqPrefix(this.prefix),
    });
    const jobId = evacuateInstanceJobId(server.id, incidentId);
    const data: EvacuateInstanceJobData = {
      host,
      incidentId,
      instanceId: server.id,
      instanceName: server.name,
      originalStatus: 'ACTIVE',
      targetHost: null,
      targetHostUse: 'first-attempt',
      resume: false,
      phase: 0,
    };
    await queue.add(JOB_NAMES.evacuateInstance, data, { ...options, jobId });
    return { queue, jobId };
  }

  /** Waits until the host job finished; returns its result, or `{failedReason}` when it failed. */
  async hostJobOutcome(
    jobId: string,
    timeoutMilliseconds = 30_000,
  ): Promise<{ result: EvacuateHostJobResult | null; failedReason: string | null }> {
    return waitFor(
      `host job ${jobId} to finish`,
      async () => {
        const state = await this.evacuationQueue.getJobState(jobId);
        if (state !== 'completed' && state !== 'failed') return false;
        // Read the job after its state: a job read first may predate its result.
        const job = await this.evacuationQueue.getJob(jobId);
        if (!job) return false;
        if (state === 'completed')
          return { result: job.returnvalue as EvacuateHostJobResult, failedReason: null };
        return { result: null, failedReason: job.failedReason };
      },
      timeoutMilliseconds,
      50,
    );
  }

  /** The servers of the simulated cloud with their host and status. */
  servers(ids: ReadonlyArray<string>) {
    return ids.map((id) => {
      const server = this.sim.model.servers.get(id);
      if (!server) throw new Error(`no server ${id}`);
      return server;
    });
  }

  /** Runs `close` when the bed closes (before the simulated cloud and the Redis keys go). */
  onClose(close: () => Promise<void>): void {
    this.extra.push({ close });
  }

  /** Log lines parsed, optionally only those whose message contains `text`. */
  messages(text?: string): string[] {
    return this.logs
      .records()
      .map((record) => String(record.msg ?? ''))
      .filter((message) => text === undefined || message.includes(text));
  }

  async close(): Promise<void> {
    for (const worker of this.workers) await worker.close(5000);
    for (const each of this.extra) await each.close().catch(() => undefined);
    await this.evacuationQueue.close();
    await this.sim.close();
    // The test Redis is shared: remove the bed's keys there (a Redis of the caller's is the caller's).
    if (!this.options.redis) await deleteKeysWithPrefix(this.redis as Redis, this.prefix);
    this.redis.disconnect();
  }
}

/**
 * Registers an `after` hook where it is called (at the top of a file: after all its tests) that
 * closes every bed started through the returned function, which starts one (EvacuationBed.start).
 */
export function bedsClosedAfterTests(): (options?: BedOptions) => Promise<EvacuationBed> {
  const beds: EvacuationBed[] = [];
  after(async () => {
    for (const bed of beds) await bed.close();
  });
  return async (options) => {
    const started = await EvacuationBed.start(options);
    beds.push(started);
    return started;
  };
}
