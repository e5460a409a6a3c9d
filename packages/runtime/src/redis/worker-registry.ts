import { WorkerHeartbeat } from '@lifeguard/contracts';
import type { Logger } from 'pino';
import { type RedisClient, scanKeys } from './redis-client.ts';
import { redisKey } from './redis-connection.ts';

/** Time to live of a worker's record, in seconds: a process that died vanishes from the list after this. */
export const WORKER_HEARTBEAT_TTL_SECONDS = 15;
/** How often a running process rewrites its record, in seconds. */
export const WORKER_HEARTBEAT_REFRESH_SECONDS = 5;

/** A worker's record as listed, with the milliseconds left before it expires. */
export type ListedWorker = WorkerHeartbeat & { readonly expiresInMilliseconds: number };

/** What a process says about itself when it registers (the times are filled in by the registry). */
export type WorkerIdentity = Omit<WorkerHeartbeat, 'startedAt' | 'refreshedAt'>;

export interface WorkerRegistryOptions {
  /** Record time to live, in seconds (default WORKER_HEARTBEAT_TTL_SECONDS). */
  ttlSeconds?: number;
  /** Refresh period, in seconds (default WORKER_HEARTBEAT_REFRESH_SECONDS); must be below the TTL. */
  refreshSeconds?: number;
  logger?: Logger;
}

/**
 * The registry of running lifeguard processes in Redis: each process keeps one JSON record
 * (WorkerHeartbeat) at `<prefix>:workers:<service>:<instance>` with a time to live, rewrites it every
 * `refreshSeconds` and deletes it when it shuts down. A process killed without shutting down
 * disappears once its record expires (15 s by default). `lifeguard status` reads it with `list`.
 */
export class WorkerRegistry {
  private timer: NodeJS.Timeout | null = null;
  private key: string | null = null;
  private record: WorkerHeartbeat | null = null;
  /** The pending first write, awaited by stop() so a record never outlives a stop. */
  private starting: Promise<void> | null = null;
  private readonly ttlSeconds: number;
  private readonly refreshSeconds: number;

  constructor(
    private readonly redis: RedisClient,
    private readonly keyPrefix: string,
    private readonly options: WorkerRegistryOptions = {},
  ) {
    this.ttlSeconds = options.ttlSeconds ?? WORKER_HEARTBEAT_TTL_SECONDS;
    this.refreshSeconds = options.refreshSeconds ?? WORKER_HEARTBEAT_REFRESH_SECONDS;
    if (!(this.refreshSeconds > 0 && this.refreshSeconds < this.ttlSeconds)) {
      throw new RangeError(
        `refreshSeconds (${this.refreshSeconds}) must be positive and below ttlSeconds (${this.ttlSeconds})`,
      );
    }
  }

  /** The key of one process's record: `<prefix>:workers:<service>:<instance>`. */
  static workerKey(keyPrefix: string, service: string, instance: string): string {
    return redisKey(keyPrefix, 'workers', service, instance);
  }

  /**
   * Writes this process's record now and then every `refreshSeconds` until `stop()`. A failed refresh
   * is logged (at debug: Redis being away is reported by the readiness check) and retried next period.
   * @throws ContractViolationError-like zod errors for an invalid identity; Redis errors of the first write
   */
  async start(identity: WorkerIdentity, startedAt: Date = new Date()): Promise<void> {
    const now = startedAt.toISOString();
    this.record = WorkerHeartbeat.parse({ ...identity, startedAt: now, refreshedAt: now });
    this.key = WorkerRegistry.workerKey(this.keyPrefix, identity.service, identity.instance);
    this.starting = this.write();
    await this.starting;
    if (this.key === null) return;
    this.timer = setInterval(() => {
      this.write().catch((error: unknown) =>
        this.options.logger?.debug({ err: error }, 'worker heartbeat refresh failed'),
      );
    }, this.refreshSeconds * 1000);
    this.timer.unref();
  }

  private async write(): Promise<void> {
    if (!this.record || !this.key) return;
    this.record = { ...this.record, refreshedAt: new Date().toISOString() };
    await this.redis.set(this.key, JSON.stringify(this.record), 'EX', this.ttlSeconds);
  }

  /** Stops refreshing and deletes the record (errors are logged, never thrown: it expires anyway). */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.starting?.catch(() => undefined);
    const key = this.key;
    this.key = null;
    this.record = null;
    if (key) {
      await this.redis
        .del(key)
        .catch((error: unknown) =>
          this.options.logger?.warn({ err: error }, 'could not delete worker record'),
        );
    }
  }

  /**
   * Every live record under the prefix (SCAN, never KEYS), sorted by service then instance. Records
   * that do not satisfy WorkerHeartbeat (another version, damage) are left out.
   */
  async list(): Promise<ListedWorker[]> {
    const pattern = `${redisKey(this.keyPrefix, 'workers')}:*`;
    const keys = await scanKeys(this.redis, pattern, 500);
    if (keys.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const key of keys) pipeline.get(key).pttl(key);
    const replies = (await pipeline.exec()) ?? [];
    const workers: ListedWorker[] = [];
    keys.forEach((_, index) => {
      const body = replies[index * 2]?.[1];
      const ttl = Number(replies[index * 2 + 1]?.[1] ?? -2);
      if (typeof body !== 'string') return;
      let json: unknown;
      try {
        json = JSON.parse(body);
      } catch {
        return;
      }
      const parsed = WorkerHeartbeat.safeParse(json);
      if (parsed.success) workers.push({ ...parsed.data, expiresInMilliseconds: Math.max(ttl, 0) });
    });
    return workers.sort((a, b) => a.service.localeCompare(b.service) || a.instance.localeCompare(b.instance));
  }
}
