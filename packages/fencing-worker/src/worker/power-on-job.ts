import { PowerOnJobData as PowerOnJobDataSchema, transitionEventId } from '@lifeguard/contracts';
import { IncidentNotFoundError, type IncidentStore } from '@lifeguard/instance-ha';
import type { EventPublisher, Logger } from '@lifeguard/runtime';
import { type Job, UnrecoverableError } from 'bullmq';
import type { HostFencer } from '../fencing/host-fencer.ts';
import { redactSecrets } from '../process/redact-secrets.ts';
import type { FencingMetrics } from './fencing-metrics.ts';
import { beginJobAttempt } from './job-attempt.ts';
import { classifyJobError } from './job-errors.ts';

export interface PowerOnJobDependencies {
  incidents: IncidentStore;
  fencer: HostFencer;
  events: Pick<EventPublisher, 'publish'>;
  logger: Logger;
  metrics: FencingMetrics;
  secrets: ReadonlyArray<string>;
}

/** What a power-on job did. */
export interface PowerOnJobResult {
  host: string;
  incidentId: string;
  poweredOn: boolean;
  /** The method that powered the host on, or null when skipped. */
  method: string | null;
  /** Why it was skipped, or null. */
  skipped: string | null;
}

/**
 * One `power-on` job (the evacuation worker adds it after a successful evacuation, docs/instance-ha-rules.md#host-job
 * step 5; only the fencing worker holds BMC credentials): powers the host on through the first
 * method of its topology that accepts it and publishes `host.powered-on`. A kdump-fenced host is not
 * powered on (kdump's own final action decides, docs/instance-ha-rules.md#kdump). An incident without a fence record is
 * refused: nothing was evacuated from it, so nothing should be switched on.
 */
export class PowerOnJob {
  constructor(private readonly deps: PowerOnJobDependencies) {}

  async run(job: Job): Promise<PowerOnJobResult> {
    const { data, attempt, logger } = beginJobAttempt(
      job,
      PowerOnJobDataSchema,
      'power-on job data',
      this.deps.logger,
    );
    try {
      const incident = await this.deps.incidents.get(data.incidentId);
      if (incident === null) throw new IncidentNotFoundError(data.incidentId);
      if (incident.fence === null) {
        throw new UnrecoverableError(
          `incident ${data.incidentId} has no fence record; refusing to power ${data.host} on`,
        );
      }
      if (incident.fence.proof === 'kdump') {
        logger.info('kdump-fenced host: not powered on (kdump decides)');
        this.deps.metrics.powerOn.inc({ result: 'skipped' });
        return { ...data, poweredOn: false, method: null, skipped: 'kdump-fenced' };
      }
      const { method } = await this.deps.fencer.powerOn(data.host, logger);
      // One id per incident: a job retried after its worker died past this point publishes it again
      // as the same event.
      await this.deps.events.publish(
        'host.powered-on',
        { host: data.host, incidentId: data.incidentId, method },
        { id: transitionEventId('host.powered-on', data.incidentId) },
      );
      this.deps.metrics.powerOn.inc({ result: 'succeeded' });
      return { ...data, poweredOn: true, method, skipped: null };
    } catch (error) {
      if (error instanceof UnrecoverableError) {
        this.deps.metrics.powerOn.inc({ result: 'failed' });
        logger.error({ alert: true, reason: error.message }, 'ALERT: power-on refused');
        throw error;
      }
      const { kind, recoverable } = classifyJobError(error);
      const reason = redactSecrets(error instanceof Error ? error.message : String(error), this.deps.secrets);
      const final = !recoverable || attempt >= (job.opts.attempts ?? 1);
      this.deps.metrics.powerOn.inc({ result: final ? 'failed' : 'retried' });
      if (final) logger.error({ alert: true, kind, reason }, 'ALERT: power-on failed; the host stays off');
      else logger.warn({ kind, reason }, 'power-on attempt failed; it will be retried');
      if (!recoverable) throw new UnrecoverableError(`not recoverable (${kind}): ${reason}`);
      throw error;
    }
  }
}
