import { HostName, IncidentId, Timestamp } from '@lifeguard/contracts';
import type { RedisClient } from '@lifeguard/runtime';
import { redisKey } from '@lifeguard/runtime';
import { z } from 'zod';
import { shortHostname } from '../services/short-hostname.ts';

/**
 * A host whose `forced_down` Nova refuses to lift (400: `done` evacuation migrations remain until its
 * nova-compute starts again and marks them `completed`), as the re-enable job records it.
 */
export const ReenableWait = z.object({
  host: HostName,
  serviceId: z.string().min(1),
  incidentId: IncidentId.nullable(),
  /** The first refusal of this wait. */
  since: Timestamp,
  /** The latest refusal. */
  lastRefusedAt: Timestamp,
  /** Nova's message. */
  reason: z.string(),
  /** When `host.reenable.waiting` was published for this wait, or null before the alert time. */
  announcedAt: Timestamp.nullable(),
});
export type ReenableWait = z.infer<typeof ReenableWait>;

/** The refusal just met: which host, service and incident, and Nova's message. */
export interface ForcedDownRefusal {
  readonly host: string;
  readonly serviceId: string;
  readonly incidentId: string | null;
  readonly reason: string;
}

/** Seconds a wait has lasted at `now`. */
export function waitingSeconds(wait: Pick<ReenableWait, 'since'>, now: Date): number {
  return Math.max(0, (now.getTime() - Date.parse(wait.since)) / 1000);
}

/**
 * True when a wait must be announced now: it has lasted at least `alertSeconds`
 * (LIFEGUARD_REENABLE_WAITING_ALERT_SECONDS) and was not announced yet.
 */
export function waitToAnnounce(wait: ReenableWait, now: Date, alertSeconds: number): boolean {
  return wait.announcedAt === null && waitingSeconds(wait, now) >= alertSeconds;
}

/**
 * The hosts waiting for their nova-compute to restart before Nova lets lifeguard lift `forced_down`,
 * kept in Redis so that every worker process (the metric) and `lifeguard status` / `hosts` see them.
 * One hash, `<prefix>:evacuation:reenable-waiting`: short hostname → the ReenableWait as JSON. Only
 * the host's re-enable job writes its field (BullMQ de-duplicates those jobs per host).
 */
export class ReenableWaits {
  private readonly key: string;

  constructor(
    private readonly redis: RedisClient,
    keyPrefix: string,
  ) {
    this.key = redisKey(keyPrefix, 'evacuation', 'reenable-waiting');
  }

  /**
   * Records a refusal. A wait of the same service and incident keeps its `since` and `announcedAt`;
   * otherwise a new wait starts at `now`.
   * @returns the wait as recorded
   */
  async refused(refusal: ForcedDownRefusal, now: Date = new Date()): Promise<ReenableWait> {
    const previous = await this.get(refusal.host);
    const same =
      previous !== null &&
      previous.serviceId === refusal.serviceId &&
      previous.incidentId === refusal.incidentId;
    const wait: ReenableWait = {
      host: refusal.host,
      serviceId: refusal.serviceId,
      incidentId: refusal.incidentId,
      since: same ? previous.since : now.toISOString(),
      lastRefusedAt: now.toISOString(),
      reason: refusal.reason,
      announcedAt: same ? previous.announcedAt : null,
    };
    await this.redis.hset(this.key, shortHostname(refusal.host), JSON.stringify(wait));
    return wait;
  }

  /** Notes that the host's wait was announced at `at`. */
  async announced(wait: ReenableWait, at: Date = new Date()): Promise<ReenableWait> {
    const next = { ...wait, announcedAt: at.toISOString() };
    await this.redis.hset(this.key, shortHostname(wait.host), JSON.stringify(next));
    return next;
  }

  /** Ends the host's wait (re-enabled, or no longer lifeguard's to re-enable). */
  async clear(host: string): Promise<void> {
    await this.redis.hdel(this.key, shortHostname(host));
  }

  /** The host's wait, or null (also for a record that does not parse: it is replaced on the next write). */
  async get(host: string): Promise<ReenableWait | null> {
    const raw = await this.redis.hget(this.key, shortHostname(host));
    return raw === null ? null : parseWait(raw);
  }

  /**
   * Every recorded wait, sorted by host; records that do not parse are returned under `unreadable`
   * (by short hostname) and left in Redis.
   */
  async list(): Promise<ReenableWait[]>;
  async list(withUnreadable: true): Promise<{ waits: ReenableWait[]; unreadable: string[] }>;
  async list(
    withUnreadable = false,
  ): Promise<ReenableWait[] | { waits: ReenableWait[]; unreadable: string[] }> {
    const all = await this.redis.hgetall(this.key);
    const waits: ReenableWait[] = [];
    const unreadable: string[] = [];
    for (const [field, raw] of Object.entries(all)) {
      const wait = parseWait(raw);
      if (wait === null) unreadable.push(field);
      else waits.push(wait);
    }
    waits.sort((a, b) => a.host.localeCompare(b.host, 'en', { numeric: true }));
    return withUnreadable ? { waits, unreadable: unreadable.sort() } : waits;
  }
}

function parseWait(raw: string): ReenableWait | null {
  try {
    const parsed = ReenableWait.safeParse(JSON.parse(raw));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}
