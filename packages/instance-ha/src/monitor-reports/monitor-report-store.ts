import type { RedisClient } from '@lifeguard/runtime';
import { redisKey } from '@lifeguard/runtime';
import { shortHostname } from '../services/short-hostname.ts';
import { MonitorReport, MonitorReportVerdict } from './monitor-report.ts';

/** How long a verdict is kept for its sender to read (seconds). */
export const MONITOR_REPORT_VERDICT_TTL_SECONDS = 86_400;

/**
 * Host monitors' reports in Redis, shared by their sender (the Masakari engine) and the node monitor:
 * `<prefix>:instance-ha:monitor-reports` (hash: host → the latest report, JSON),
 * `<prefix>:instance-ha:monitor-reports:sequence` (a counter the monitor watches to poll at once) and
 * `<prefix>:instance-ha:monitor-reports:verdict:<reference>` (the node monitor's verdict, JSON, kept a
 * day) and `<prefix>:instance-ha:monitor-reports:admitted` (hash: host → the latest admitted report,
 * read by every action's re-check: the fence comes before DELTA, so the host's own reports cannot
 * prove it down yet). A report is removed from the pending ones once judged; recording one again is
 * harmless (same host, same fields). An admitted report stays until the next of its host replaces it:
 * once nova-compute reports after it, the report rule no longer finds the host down by it.
 */
export class MonitorReportStore {
  private readonly reportsKey: string;
  private readonly sequenceKey: string;
  private readonly admittedKey: string;

  constructor(
    private readonly redis: RedisClient,
    private readonly keyPrefix: string,
  ) {
    this.reportsKey = redisKey(keyPrefix, 'instance-ha', 'monitor-reports');
    this.sequenceKey = redisKey(keyPrefix, 'instance-ha', 'monitor-reports', 'sequence');
    this.admittedKey = redisKey(keyPrefix, 'instance-ha', 'monitor-reports', 'admitted');
  }

  private verdictKey(reference: string): string {
    return redisKey(this.keyPrefix, 'instance-ha', 'monitor-reports', 'verdict', reference);
  }

  /** Records a report (the host's latest) and bumps the sequence the node monitor watches. */
  async record(report: MonitorReport): Promise<void> {
    const parsed = MonitorReport.parse(report);
    await this.redis
      .multi()
      .hset(this.reportsKey, parsed.host, JSON.stringify(parsed))
      .incr(this.sequenceKey)
      .exec();
  }

  /** Every pending report; an entry that is not a report is dropped and named in `invalid`. */
  async pending(): Promise<{ reports: MonitorReport[]; invalid: string[] }> {
    const all = await this.redis.hgetall(this.reportsKey);
    const reports: MonitorReport[] = [];
    const invalid: string[] = [];
    for (const [host, text] of Object.entries(all)) {
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        value = null;
      }
      const parsed = MonitorReport.safeParse(value);
      if (parsed.success) reports.push(parsed.data);
      else invalid.push(host);
    }
    if (invalid.length > 0) await this.redis.hdel(this.reportsKey, ...invalid);
    return { reports: reports.sort((a, b) => a.host.localeCompare(b.host)), invalid };
  }

  /** The counter bumped by every recorded report. */
  async sequence(): Promise<number> {
    return Number((await this.redis.get(this.sequenceKey)) ?? 0);
  }

  /** Keeps `verdict` for `report`'s sender and removes the report, unless a newer one replaced it. */
  async judge(report: MonitorReport, verdict: MonitorReportVerdict): Promise<void> {
    const current = await this.redis.hget(this.reportsKey, report.host);
    const multi = this.redis
      .multi()
      .set(
        this.verdictKey(report.reference),
        JSON.stringify(MonitorReportVerdict.parse(verdict)),
        'EX',
        MONITOR_REPORT_VERDICT_TTL_SECONDS,
      );
    if (current !== null && current === JSON.stringify(report)) multi.hdel(this.reportsKey, report.host);
    if (verdict.verdict === 'admitted') multi.hset(this.admittedKey, report.host, JSON.stringify(report));
    await multi.exec();
  }

  /**
   * Records `report` as its host's latest admitted one, ahead of its verdict (the node monitor does so
   * before it publishes the host's `host.down`, for the fence's re-check). Recording it again is harmless.
   */
  async recordAdmitted(report: MonitorReport): Promise<void> {
    const parsed = MonitorReport.parse(report);
    await this.redis.hset(this.admittedKey, parsed.host, JSON.stringify(parsed));
  }

  /** The latest admitted report of each host, by short host name (entries that are not reports skipped). */
  async admittedByShortHost(): Promise<Map<string, MonitorReport>> {
    const admitted = new Map<string, MonitorReport>();
    for (const text of Object.values(await this.redis.hgetall(this.admittedKey))) {
      let value: unknown = null;
      try {
        value = JSON.parse(text);
      } catch {}
      const parsed = MonitorReport.safeParse(value);
      if (parsed.success) admitted.set(shortHostname(parsed.data.host), parsed.data);
    }
    return admitted;
  }

  /**
   * The verdict on the report with `reference`, or null while none is kept.
   * @throws Error naming the key when what is kept is not a verdict
   */
  async verdict(reference: string): Promise<MonitorReportVerdict | null> {
    const key = this.verdictKey(reference);
    const text = await this.redis.get(key);
    if (text === null) return null;
    const parsed = MonitorReportVerdict.safeParse(JSON.parse(text));
    if (!parsed.success)
      throw new Error(`${key} does not hold a monitor report verdict: ${parsed.error.message}`);
    return parsed.data;
  }
}
