import { enableService, type Incident } from '@lifeguard/instance-ha';
import { findComputeService, NovaApiError } from '@lifeguard/openstack';
import { formatDuration } from '@lifeguard/operator-views';
import type { ActionConnections } from '../action-connections.ts';
import { OperatorError } from '../operator-error.ts';
import type { StepProgress } from '../step-progress.ts';
import {
  planRehabilitation,
  type RehabilitationStep,
  type RehabilitationVerdict,
} from './rehabilitation-plan.ts';

/** A verdict that lets the rehabilitation go on: a plan, or nothing to do. */
export type RehabilitationGoAhead = Exclude<RehabilitationVerdict, { kind: 'refuse' }>;

/** A host checked for rehabilitation: its compute service, its open incident, and the verdict. */
export interface CheckedHost {
  /** The host as Nova names it. */
  readonly host: string;
  readonly serviceId: string;
  readonly incident: Incident | null;
  readonly verdict: RehabilitationGoAhead;
}

/** `host rehabilitate` refused (planRehabilitation's reasons and hints); nothing was changed. */
export class RehabilitationRefusedError extends OperatorError {
  constructor(
    readonly host: string,
    readonly verdict: Extract<RehabilitationVerdict, { kind: 'refuse' }>,
  ) {
    super(verdict.reasons.join('; '), verdict.hints);
    this.name = 'RehabilitationRefusedError';
  }
}

/**
 * Reads the host's compute service, its open incident and the evacuations from it, and decides
 * (planRehabilitation) whether it can be put back into service. Changes nothing.
 * @throws OperatorError when Nova has no such host; RehabilitationRefusedError when it is not safe or
 *   not lifeguard's to do
 */
export async function checkRehabilitation(
  connections: ActionConnections,
  host: string,
  options: { serviceDownTimeSeconds: number },
  progress: StepProgress,
): Promise<CheckedHost> {
  const compute = connections.openstack().compute;
  const store = await connections.incidents();
  progress.start(`Reading ${host}: compute service, incident, evacuations`);
  const service = await findComputeService(compute, host, null);
  if (service === null) {
    progress.fail(`Nova has no nova-compute service on ${host}`);
    throw new OperatorError(`no compute host ${host}`, ['see `lifeguard hosts` for the hosts Nova knows']);
  }
  const [incident, migrations] = await Promise.all([
    store.getOpenIncident(host),
    compute.listMigrations({ sourceCompute: service.host, migrationType: 'evacuation', maxRecords: 1000 }),
  ]);
  const verdict = planRehabilitation({
    host: service.host,
    service,
    incident,
    migrations,
    serviceDownTimeSeconds: options.serviceDownTimeSeconds,
    now: new Date(),
  });
  if (verdict.kind === 'refuse') {
    progress.fail(`${host} cannot be rehabilitated now; nothing was changed`);
    throw new RehabilitationRefusedError(host, verdict);
  }
  if (verdict.kind === 'nothing-to-do') progress.succeed(verdict.reason);
  else progress.succeed(`${host} can be put back into service`);
  return { host: service.host, serviceId: service.id, incident, verdict };
}

/**
 * Carries out a checked host's plan, step by step (none for `nothing-to-do`), and returns the steps
 * done. The incident is closed with the outcome `rehabilitated by <closedBy>`.
 * @throws OperatorError when a step fails (what was done stays done)
 */
export async function rehabilitateHost(
  connections: ActionConnections,
  checked: CheckedHost,
  options: { waitSeconds: number; closedBy: string },
  progress: StepProgress,
): Promise<RehabilitationStep[]> {
  if (checked.verdict.kind !== 'plan') return [];
  const done: RehabilitationStep[] = [];
  for (const step of checked.verdict.steps) {
    await runStep(connections, step, checked, options, progress);
    done.push(step);
  }
  return done;
}

async function runStep(
  connections: ActionConnections,
  step: RehabilitationStep,
  { host, serviceId, incident }: CheckedHost,
  options: { waitSeconds: number; closedBy: string },
  progress: StepProgress,
): Promise<void> {
  switch (step) {
    case 'unset-forced-down':
      return liftForcedDown(connections, host, serviceId, progress);
    case 'wait-until-up':
      return waitUntilUp(connections, host, serviceId, options.waitSeconds, progress);
    case 'enable':
      progress.start(`Enabling the compute service of ${host}`);
      await enableService(connections.openstack().compute, serviceId);
      progress.succeed(`${host} enabled`);
      return;
    case 'close-incident':
      if (!incident) return;
      progress.start(`Closing incident ${incident.id}`);
      await (await connections.incidents()).close(incident.id, `rehabilitated by ${options.closedBy}`);
      progress.succeed(`incident ${incident.id} closed`);
      return;
    case 'publish-reenabled':
      progress.start('Publishing host.reenabled');
      await (await connections.events()).publish('host.reenabled', {
        host,
        serviceId,
        incidentId: incident?.id ?? null,
      });
      progress.succeed('host.reenabled published');
      return;
  }
}

async function liftForcedDown(
  connections: ActionConnections,
  host: string,
  serviceId: string,
  progress: StepProgress,
): Promise<void> {
  progress.start(`Lifting forced_down of ${host}`);
  try {
    await connections.openstack().compute.updateService(serviceId, { forced_down: false });
  } catch (error) {
    progress.fail(`Nova refused to lift forced_down of ${host}`);
    if (error instanceof NovaApiError && error.status === 400) {
      throw new OperatorError(`Nova refused: ${error.apiMessage}`, [
        `Nova refuses while evacuations from ${host} are "done": start nova-compute on ${host} so it cleans them up, then run this again.`,
      ]);
    }
    throw error;
  }
  progress.succeed(`forced_down of ${host} lifted`);
}

async function waitUntilUp(
  connections: ActionConnections,
  host: string,
  serviceId: string,
  waitSeconds: number,
  progress: StepProgress,
): Promise<void> {
  const compute = connections.openstack().compute;
  const started = Date.now();
  progress.start(`Waiting for nova-compute on ${host} to report up`);
  for (;;) {
    const service = await findComputeService(compute, host, serviceId);
    if (service?.state === 'up') break;
    const waited = Date.now() - started;
    if (waited > waitSeconds * 1000) {
      progress.fail(`nova-compute on ${host} did not report up within ${waitSeconds} s`);
      throw new OperatorError(`${host} still reports ${service?.state ?? 'nothing'}; it stays disabled`, [
        `start nova-compute on ${host}, then run this again (forced_down is already lifted)`,
      ]);
    }
    progress.update(`Waiting for nova-compute on ${host} to report up (${formatDuration(waited)})`);
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  progress.succeed(`nova-compute on ${host} reports up`);
}
