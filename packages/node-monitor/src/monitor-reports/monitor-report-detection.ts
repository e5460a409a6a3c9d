import {
  type AdmissionDecision,
  type Categorisation,
  type FreshFailure,
  type Incident,
  type InstanceHaConfig,
  judgeMonitorReport,
  type MonitorReport,
  type MonitorReportStore,
  type MonitorReportVerdict,
  shortHostname,
} from '@lifeguard/instance-ha';
import type { Logger } from '@lifeguard/runtime';
import { type EarlyPoll, STALE_MARGIN_MILLISECONDS } from '../next-poll.ts';

/** Gates that hold a host for a later cycle rather than refuse it. */
const HOLDING_GATES: ReadonlySet<string> = new Set([
  'mass-event-hold-down',
  'rate-limit',
  'kdump-wait',
  'heartbeat-cliff',
]);

/** How often the leading monitor looks for a new host monitor report, to poll at once. */
export const MONITOR_REPORT_CHECK_MILLISECONDS = 250;

export interface MonitorReportDetectionOptions {
  readonly store: Pick<MonitorReportStore, 'pending' | 'judge' | 'sequence' | 'recordAdmitted'>;
  readonly config: Pick<InstanceHaConfig, 'novaReportIntervalSeconds'>;
  readonly logger: Logger;
}

/** A poll cycle without host monitor reports: the categorisation as it is. */
export const NO_MONITOR_REPORTS: Pick<MonitorReportDetection, 'apply' | 'admitting' | 'judged'> = {
  apply: async (categorisation) => ({ categorisation, earlyPoll: null }),
  admitting: async () => undefined,
  judged: async () => undefined,
};

/**
 * Host monitors' reports in the poll cycle (docs/migrating-from-masakari.md#compute_host): each pending
 * report is judged by judgeMonitorReport on the cycle's Nova listing; one that holds adds its host to
 * the cycle's fresh failures, so every admission gate judges it as it judges Nova's own failures. After
 * the admission each report handed to the gates gets its verdict (the incident, or the gate that
 * refused), kept for the report's sender; a host still held (mass-event hold-down, rate limit, kdump
 * wait) is judged again next cycle.
 */
export class MonitorReportDetection {
  /** Reports handed to this cycle's gates, by host. */
  private handed = new Map<string, MonitorReport>();

  constructor(private readonly options: MonitorReportDetectionOptions) {}

  async apply(
    categorisation: Categorisation,
    inputs: { readonly open: ReadonlyMap<string, Incident>; readonly now: Date },
  ): Promise<{ categorisation: Categorisation; earlyPoll: EarlyPoll | null }> {
    const { store, config, logger } = this.options;
    const { reports, invalid } = await store.pending();
    if (invalid.length > 0) logger.warn({ hosts: invalid }, 'monitor reports that are not reports dropped');
    this.handed = new Map();
    const added: FreshFailure[] = [];
    let early: EarlyPoll | null = null;
    const failed = new Set(categorisation.freshFailures.map((failure) => failure.service.host));
    for (const report of reports) {
      const short = shortHostname(report.host);
      const service =
        categorisation.services.find((each) => each.host === report.host) ??
        categorisation.services.find((each) => each.shortHost === short) ??
        null;
      const incident = inputs.open.get(short);
      if (incident !== undefined) {
        await this.verdict(
          report,
          { verdict: 'admitted', incidentId: incident.id, reason: 'an incident is open for the host' },
          inputs.now,
        );
        continue;
      }
      const judgement = judgeMonitorReport(
        { report, service, alreadyFailed: service !== null && failed.has(service.host), now: inputs.now },
        config,
      );
      if (judgement.kind === 'no-service' || judgement.kind === 'host-reports') {
        logger.info(
          { host: report.host, reference: report.reference },
          `monitor report refused: ${judgement.reason}`,
        );
        await this.verdict(report, { verdict: 'refused', gate: null, reason: judgement.reason }, inputs.now);
      } else if (judgement.kind === 'awaiting-nova') {
        if (judgement.decideAt !== null && (early === null || judgement.decideAt < early.at))
          early = {
            at: new Date(judgement.decideAt.getTime() + STALE_MARGIN_MILLISECONDS),
            host: report.host,
          };
      } else {
        this.handed.set(report.host, report);
        if (judgement.kind === 'failed' && service !== null) {
          added.push({ service, reason: 'monitor-reported' });
          logger.warn(
            { host: service.host, reference: report.reference },
            `${judgement.reason}: judged by the admission gates`,
          );
        }
      }
    }
    return {
      categorisation: { ...categorisation, freshFailures: [...categorisation.freshFailures, ...added] },
      earlyPoll: early,
    };
  }

  /**
   * Records the reports of the hosts the gates admitted as admitted, before their `host.down` is
   * published: the fencing worker may re-check a host as soon as it is, and its host-down gate judges a
   * host still reporting by DELTA by its admitted report. The verdict, which names the incident,
   * follows once published (judged).
   */
  async admitting(decision: Pick<AdmissionDecision, 'admitted'>): Promise<void> {
    for (const [host, report] of this.handed) {
      const short = shortHostname(host);
      const admitted = decision.admitted.some(
        ({ service }) => service.host === host || shortHostname(service.host) === short,
      );
      if (admitted) await this.options.store.recordAdmitted(report);
    }
  }

  /** Gives each report handed to the gates its verdict: the incident `host.down` opened, or the refusal. */
  async judged(
    decision: AdmissionDecision,
    published: ReadonlyArray<{ readonly host: string; readonly incidentId: string }>,
    now: Date,
  ): Promise<void> {
    for (const [host, report] of this.handed) {
      const short = shortHostname(host);
      const matches = (name: string) => name === host || shortHostname(name) === short;
      const opened = published.find((each) => matches(each.host));
      if (opened) {
        await this.verdict(
          report,
          { verdict: 'admitted', incidentId: opened.incidentId, reason: 'admitted by every gate' },
          now,
        );
        continue;
      }
      const blocked = decision.blocked.find((block) => block.hosts.some(matches));
      // A host held for now (hold-down, rate limit, kdump wait, cliff) is judged again next cycle.
      if (blocked && HOLDING_GATES.has(blocked.gate)) continue;
      const over = decision.thresholdExceeded.find((each) => (each.hosts ?? []).some(matches));
      if (blocked || over) {
        const gate = blocked?.gate ?? 'threshold';
        const reason =
          blocked?.reason ?? `THRESHOLD: ${over?.impacted} of ${over?.total} compute hosts impacted`;
        await this.verdict(report, { verdict: 'refused', gate, reason }, now);
      } else if (decision.stoppedBy !== null) {
        await this.verdict(
          report,
          {
            verdict: 'refused',
            gate: decision.stoppedBy,
            reason: `the cycle was stopped by ${decision.stoppedBy}`,
          },
          now,
        );
      }
    }
    this.handed = new Map();
  }

  private async verdict(
    report: MonitorReport,
    verdict:
      | Omit<Extract<MonitorReportVerdict, { verdict: 'admitted' }>, 'host' | 'at'>
      | Omit<Extract<MonitorReportVerdict, { verdict: 'refused' }>, 'host' | 'at'>,
    now: Date,
  ): Promise<void> {
    await this.options.store.judge(report, {
      ...verdict,
      host: report.host,
      at: now.toISOString(),
    } as MonitorReportVerdict);
  }
}

/**
 * Polls at once when a host monitor report arrives: the leading monitor reads the reports' sequence
 * every MONITOR_REPORT_CHECK_MILLISECONDS and brings the next poll forward when it moved.
 */
export function watchMonitorReports(
  store: Pick<MonitorReportStore, 'sequence'>,
  lease: { readonly isLeader: boolean },
  loop: { pollSoon(): void },
  logger: Logger,
): () => void {
  let seen: number | null = null;
  let looking = false;
  const timer = setInterval(() => {
    if (looking || !lease.isLeader) return;
    looking = true;
    store
      .sequence()
      .then((sequence) => {
        if (seen !== null && sequence !== seen) {
          logger.info('host monitor report received: polling now');
          loop.pollSoon();
        }
        seen = sequence;
      })
      .catch((error: unknown) => logger.warn({ err: error }, 'monitor report check failed'))
      .finally(() => {
        looking = false;
      });
  }, MONITOR_REPORT_CHECK_MILLISECONDS);
  return () => clearInterval(timer);
}
