import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createEvent,
  type EventOf,
  type HostDownEvidence,
  type JOB_QUEUES,
  type LifeguardEvent,
  type LifeguardEventType,
} from '@lifeguard/contracts';
import { type Incident, IncidentStore, KdumpStore, loadInstanceHaConfig } from '@lifeguard/instance-ha';
import { type ComputeService, createOpenStackClients, type NovaClient } from '@lifeguard/openstack';
import {
  AmqpClient,
  bullmqPrefix,
  createLogger,
  declareEventsTopology,
  EventJournal,
  EventPublisher,
  type Logger,
  leaseTokenKey,
  nodeMonitorLeaderKey,
} from '@lifeguard/runtime';
import {
  CapturedLines,
  createTestVhost,
  deleteKeysWithPrefix,
  issueFencingToken,
  REDIS_URL,
  randomKeyPrefix,
  requireRealNovaVariables,
  type TestVhost,
  testRedis,
  waitFor,
} from '@lifeguard/testing';
import { type Job, Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { Registry } from 'prom-client';
import { parse as parseYaml } from 'yaml';
import { realNova } from '../../../../test/e2e/support/real-nova.ts';
import {
  type DriverTiming,
  type FenceAgentHooks,
  FencingWorker,
  type FencingWorkerConfig,
  fencingOptions,
  fencingWorkerSchema,
  parseFencingConfig,
} from '../../src/index.ts';

/** The real-Nova harness's settings, exported by the test runner from its env.sh. */
export function realNovaEnvironment() {
  requireRealNovaVariables(['NOVA_URL', 'RN_TOKEN', 'RN_COMPUTE_HOSTS']);
  return {
    novaUrl: process.env.NOVA_URL!,
    token: process.env.RN_TOKEN!,
    hosts: process.env.RN_COMPUTE_HOSTS!.split(/\s+/).filter(Boolean),
  };
}

/** OS_* variables that point an OpenStack client at the harness's Nova (noauth2 admin token). */
export function realNovaClientEnvironment(): Record<string, string> {
  const { novaUrl, token } = realNovaEnvironment();
  return { OS_AUTH_TYPE: 'admin_token', OS_TOKEN: token, OS_ENDPOINT: novaUrl };
}

export interface WorkerStartOptions {
  fencingYaml: string;
  /** config.yaml body below `config:` (e.g. `CHECK_KDUMP: "true"`). */
  configYaml?: string;
  /** Worker environment settings (LIFEGUARD_FENCING_*). */
  settings?: Record<string, string>;
  driverTiming?: DriverTiming;
  fenceAgentHooks?: FenceAgentHooks;
  /** The worker's Prometheus registry (a fresh one by default), to read its metrics. */
  registry?: Registry;
}

/**
 * Everything a fencing-worker test needs on the real brokers: a private RabbitMQ vhost, a random
 * Redis key prefix, an event publisher journaling into that prefix, the incident store, a Nova client
 * on the real-Nova harness, and in-process FencingWorkers whose log lines are captured.
 */
export class WorkerTestBed {
  readonly logs = new CapturedLines();
  readonly logger: Logger = createLogger({
    service: 'fencing-worker',
    level: 'debug',
    destination: this.logs,
  });
  readonly keyPrefix = randomKeyPrefix('fencing');
  readonly redis: Redis = testRedis();
  readonly incidents = new IncidentStore(this.redis, this.keyPrefix);
  readonly kdump = new KdumpStore(this.redis, this.keyPrefix);
  readonly journal = new EventJournal(this.redis, this.keyPrefix);
  private readonly workers: FencingWorker[] = [];
  private readonly extraRedis: Redis[] = [];
  private readonly queues: Queue[] = [];
  private readonly directory = mkdtempSync(join(tmpdir(), 'lifeguard-fencing-bed-'));
  private nextToken = 1;
  private leaderToken: number | null = null;

  /** Publishes as the node monitor would (journaled in the bed's prefix). */
  readonly events: EventPublisher;

  private constructor(
    readonly vhost: TestVhost,
    readonly amqp: AmqpClient,
    readonly compute: NovaClient,
  ) {
    const silent = createLogger({ service: 'test-node-monitor', level: 'silent' });
    this.events = new EventPublisher(
      amqp,
      { service: 'node-monitor', instance: 'test' },
      silent,
      this.journal,
    );
  }

  /**
   * @param options.compute the Nova the workers talk to (default: the real-Nova harness)
   */
  static async create(label: string, options: { compute?: NovaClient } = {}): Promise<WorkerTestBed> {
    const vhost = await createTestVhost(label);
    const silent = createLogger({ service: 'test-publisher', level: 'silent' });
    const amqp = await AmqpClient.connect({
      url: vhost.url,
      connectionName: `${label}-publisher`,
      service: 'test',
      logger: silent,
    });
    await amqp.declare(declareEventsTopology);
    const compute =
      options.compute ??
      createOpenStackClients({ env: realNovaClientEnvironment(), searchDirectories: [] }).compute;
    return new WorkerTestBed(vhost, amqp, compute);
  }

  /** A file in the bed's private directory. */
  file(name: string, content: string): string {
    const path = join(this.directory, name);
    writeFileSync(path, content, { mode: 0o600 });
    return path;
  }

  /** The worker configuration the bed's workers use (loopback BMCs allowed, short job lock). */
  configuration(options: WorkerStartOptions): FencingWorkerConfig {
    const settings = fencingWorkerSchema.parse({
      LIFEGUARD_FENCING_ALLOW_LOOPBACK: 'true',
      LIFEGUARD_FENCING_ATTEMPTS: '3',
      LIFEGUARD_FENCING_BACKOFF_SECONDS: '0.2',
      LIFEGUARD_JOB_LOCK_SECONDS: '5',
      LIFEGUARD_JOB_STALLED_CHECK_SECONDS: '2',
      ...options.settings,
    });
    const configPath = this.file(
      `config-${Math.random().toString(36).slice(2)}.yaml`,
      `config:\n${options.configYaml ?? '  FENCING_TIMEOUT: "10"'}\n`,
    );
    const instanceHa = loadInstanceHaConfig({ path: configPath, env: {} });
    const fencing = parseFencingConfig(
      parseYaml(options.fencingYaml) as Record<string, unknown>,
      'fencing.yaml',
      fencingOptions(settings, instanceHa.config),
    );
    return { settings, instanceHa, fencing, concurrency: settings.LIFEGUARD_FENCING_CONCURRENCY ?? 4 };
  }

  /** Starts an in-process fencing worker on the bed's vhost and prefix. */
  async startWorker(options: WorkerStartOptions): Promise<FencingWorker> {
    const config = this.configuration(options);
    const name = `worker-${this.workers.length + 1}`;
    const amqp = await AmqpClient.connect({
      url: this.vhost.url,
      connectionName: `fencing-worker-test-${name}`,
      service: 'fencing-worker',
      logger: this.logger,
    });
    await amqp.declare(declareEventsTopology);
    const redis = testRedis();
    const workerRedis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
    this.extraRedis.push(redis, workerRedis);
    const events = new EventPublisher(
      amqp,
      { service: 'fencing-worker', instance: name },
      this.logger,
      this.journal,
    );
    const worker = await FencingWorker.start({
      config,
      amqp,
      redis,
      workerRedis,
      keyPrefix: this.keyPrefix,
      events,
      compute: this.compute,
      logger: this.logger.child({ worker: name }),
      instanceName: name,
      registry: options.registry ?? new Registry(),
      kdumpPollMilliseconds: 100,
      ...(options.driverTiming ? { driverTiming: options.driverTiming } : {}),
      ...(options.fenceAgentHooks ? { fenceAgentHooks: options.fenceAgentHooks } : {}),
    });
    const close = worker.close.bind(worker);
    worker.close = async (timeout?: number) => {
      await close(timeout);
      await amqp.close();
    };
    this.workers.push(worker);
    return worker;
  }

  /** A BullMQ queue handle on the bed's prefix (closed with the bed). */
  queue(name: (typeof JOB_QUEUES)[keyof typeof JOB_QUEUES]): Queue {
    const queue = new Queue(name, { connection: this.redis, prefix: bullmqPrefix(this.keyPrefix) });
    this.queues.push(queue);
    return queue;
  }

  /**
   * Waits until a job is in `state` and returns it read AFTER that (a Job read earlier holds the
   * fields of its earlier state: no return value yet, attempts not yet counted).
   */
  async jobIn(
    queue: Queue,
    jobId: string,
    state: 'completed' | 'failed',
    timeoutMilliseconds = 30_000,
  ): Promise<Job> {
    const seen: string[] = [];
    await waitFor(
      `job ${jobId} to be ${state}`,
      async () => {
        const now = (await (await queue.getJob(jobId))?.getState()) ?? 'missing';
        if (seen.at(-1) !== now) seen.push(now);
        return now === state;
      },
      timeoutMilliseconds,
    ).catch(async (error: Error) => {
      // The failure says what the job went through and what the worker said of it.
      const job = await queue.getJob(jobId);
      const said = this.logs
        .records()
        .filter((line) => line.jobId === jobId || JSON.stringify(line).includes(jobId))
        .slice(-8)
        .map(
          (line) => `${String(line.msg)}${line.err ? ` (${JSON.stringify(line.err).slice(0, 200)})` : ''}`,
        );
      throw new Error(
        `${error.message}; its states: ${seen.join(' → ')}; attempts ${job?.attemptsMade}, failed reason ${job?.failedReason ?? 'none'}; the worker said: ${said.join(' | ') || 'nothing'}`,
      );
    });
    const job = await queue.getJob(jobId);
    if (!job) throw new Error(`job ${jobId} disappeared`);
    return job;
  }

  /** The harness's nova-compute service of `host`. */
  async service(host: string): Promise<ComputeService> {
    const [service] = await this.compute.listServices({ binary: 'nova-compute', host });
    if (!service) throw new Error(`the harness has no nova-compute on ${host}`);
    return service;
  }

  /**
   * Real Nova: hangs the host's nova-compute (SIGSTOP) and waits until Nova says `down` (the
   * harness's service_down_time), as the node monitor sees a failed host before it announces it: every
   * fence re-checks that the host is down. Nova sees of a hung host what it sees of a crashed one, and
   * the fencing worker acts on Nova's view and the BMC (here ipmi_sim, apart from the process): so
   * restoreComputes continues the process (it reports again within report_interval), which costs a
   * fraction of a second where starting a new nova-compute costs ten and more on 2 cores.
   */
  async hangCompute(host: string): Promise<void> {
    await realNova().signalCompute(host, 'STOP');
    await waitFor(
      `${host} down in Nova`,
      async () => (await this.service(host)).state === 'down',
      60_000,
      500,
    );
  }

  /** Real Nova: starts the nova-compute of each host that is not running, continues a hung one (does not wait). */
  async startComputes(hosts: ReadonlyArray<string>): Promise<void> {
    const harness = realNova();
    for (const host of hosts) await harness.startCompute(host);
  }

  /**
   * Real Nova, between tests: every host's nova-compute started, its service enabled and not forced
   * down, and Nova showing it up (a host still down would count against the next test's THRESHOLD).
   */
  async restoreComputes(hosts: ReadonlyArray<string>): Promise<void> {
    await this.startComputes(hosts);
    for (const host of hosts) await this.resetService(host);
    for (const host of hosts)
      await waitFor(`${host} up in Nova`, async () => (await this.service(host)).state === 'up', 90_000, 500);
  }

  /** Puts a harness compute service back: not forced down, enabled. */
  async resetService(host: string): Promise<void> {
    const service = await this.service(host);
    if (service.forced_down) await this.compute.updateService(service.id, { forced_down: false });
    if (service.status !== 'enabled') await this.compute.updateService(service.id, { status: 'enabled' });
  }

  /** The node monitors' lease token counter under the bed's prefix. */
  get tokenCounterKey(): string {
    return leaseTokenKey(nodeMonitorLeaderKey(this.keyPrefix));
  }

  /** A new, higher fencing token, issued as a new node monitor leader's would be. */
  async issueToken(): Promise<number> {
    const token = this.nextToken++;
    await issueFencingToken(this.redis, this.tokenCounterKey, token);
    this.leaderToken = token;
    return token;
  }

  /**
   * The current leader's token: the last one issueToken gave, or a first one. A leader stamps every
   * host.down of its term with the same token, so host.down events handled in any order are all
   * taken in; a new token per event would make the intake drop whichever it handled after a higher one.
   */
  async currentToken(): Promise<number> {
    return this.leaderToken ?? this.issueToken();
  }

  /**
   * What the node monitor does for a failed host: opens (or finds) the incident and publishes
   * `host.down` with a fencing token (by default the current leader's, currentToken).
   */
  async hostDown(
    host: string,
    options: {
      fencingToken?: number;
      kdumpFenced?: boolean;
      resume?: boolean;
      /** The host's last report to Nova before the failure, as the monitor's evidence gives it. */
      lastReportAt?: Date;
    } = {},
  ): Promise<{ incident: Incident; event: EventOf<'host.down'> }> {
    const service = await this.service(host);
    const fencingToken = options.fencingToken ?? (await this.currentToken());
    const evidence: HostDownEvidence = {
      serviceId: service.id,
      state: 'down',
      status: service.status,
      forcedDown: service.forced_down ?? false,
      updatedAt: options.lastReportAt?.toISOString() ?? null,
      ageSeconds: null,
      disabledReason: service.disabled_reason ?? null,
      zone: service.zone ?? null,
    };
    const { incident } = await this.incidents.openIncident({
      host,
      serviceId: service.id,
      fencingToken,
      kdumpFenced: options.kdumpFenced ?? false,
      resume: options.resume ?? false,
      evidence,
    });
    const event = createEvent(
      'host.down',
      {
        host,
        incidentId: incident.id,
        fencingToken,
        evidence,
        kdumpFenced: options.kdumpFenced ?? false,
        resume: options.resume ?? false,
      },
      { service: 'node-monitor', instance: 'test' },
    );
    await issueFencingToken(this.redis, this.tokenCounterKey, fencingToken);
    await this.events.publishEvent(event);
    return { incident, event };
  }

  /** Journaled events, oldest first, optionally of one type. */
  async published<Type extends LifeguardEventType>(type?: Type): Promise<Array<EventOf<Type>>> {
    const all: LifeguardEvent[] = await this.journal.recent(1000);
    return all.filter((event) => type === undefined || event.type === type) as Array<EventOf<Type>>;
  }

  /**
   * Every value stored under the bed's Redis prefix (job data, results, incidents, journals), as
   * text, for "this secret is stored nowhere" assertions.
   */
  async storedText(): Promise<string> {
    const parts: string[] = [];
    let cursor = '0';
    do {
      const [next, keys] = await this.redis.scan(cursor, 'MATCH', `${this.keyPrefix}:*`, 'COUNT', 1000);
      cursor = next;
      for (const key of keys) {
        const type = await this.redis.type(key);
        if (type === 'string') parts.push(String(await this.redis.get(key)));
        else if (type === 'hash') parts.push(JSON.stringify(await this.redis.hgetall(key)));
        else if (type === 'list') parts.push(JSON.stringify(await this.redis.lrange(key, 0, -1)));
        else if (type === 'set') parts.push(JSON.stringify(await this.redis.smembers(key)));
        else if (type === 'zset') parts.push(JSON.stringify(await this.redis.zrange(key, 0, -1)));
        else if (type === 'stream') parts.push(JSON.stringify(await this.redis.xrange(key, '-', '+')));
      }
    } while (cursor !== '0');
    return parts.join('\n');
  }

  /** Closes every open incident (after a test, so that a failed one cannot leak into the next). */
  async closeOpenIncidents(): Promise<void> {
    for (const incident of await this.incidents.listOpen())
      await this.incidents.close(incident.id, 'test cleanup');
  }

  /** Stops every worker started so far (between tests, so that the next test's configuration rules). */
  async stopWorkers(): Promise<void> {
    const running = this.workers.splice(0);
    await Promise.all(running.map((worker) => worker.close(5000)));
  }

  async close(): Promise<void> {
    await this.stopWorkers();
    await Promise.all(this.queues.map((queue) => queue.close()));
    await this.amqp.close();
    for (const connection of this.extraRedis) connection.disconnect();
    await deleteKeysWithPrefix(this.redis, this.keyPrefix);
    this.redis.disconnect();
    await this.vhost.delete();
    rmSync(this.directory, { recursive: true, force: true });
  }
}
