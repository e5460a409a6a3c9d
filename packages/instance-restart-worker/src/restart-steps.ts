import { type ComputeApi, NovaApiError, type Server } from '@lifeguard/openstack';
import { InstanceRestartFailedError } from './errors.ts';
import type { InstanceRestartMetrics } from './metrics.ts';
import { getServerOrNull } from './read-facts.ts';
import type { RestartRecords } from './restart-records.ts';

/** What the restart steps use: Nova, the job's records, the waits and a sleep (injected in tests). */
export interface RestartStepDeps {
  readonly compute: ComputeApi;
  readonly records: RestartRecords;
  readonly metrics: InstanceRestartMetrics;
  readonly stopTimeoutMilliseconds: number;
  readonly startTimeoutMilliseconds: number;
  readonly pollMilliseconds: number;
  sleep(milliseconds: number): Promise<void>;
  /** A monotonic clock in milliseconds, for the waits' deadlines. */
  monotonic(): number;
}

const vmState = (server: Server | null) => server?.['OS-EXT-STS:vm_state'] ?? null;
const taskState = (server: Server | null) => server?.['OS-EXT-STS:task_state'] ?? null;

/**
 * Polls the server every pollMilliseconds until `reached` holds, for at most `timeoutMilliseconds`.
 * @throws InstanceRestartFailedError when the wait ends first or the server is deleted
 */
async function waitFor(
  deps: RestartStepDeps,
  instanceId: string,
  what: string,
  timeoutMilliseconds: number,
  reached: (server: Server) => boolean,
): Promise<Server> {
  const deadline = deps.monotonic() + timeoutMilliseconds;
  for (;;) {
    const server = await getServerOrNull(deps.compute, instanceId);
    if (server === null)
      throw new InstanceRestartFailedError(instanceId, `the server was deleted while waiting for ${what}`);
    if (reached(server)) return server;
    if (deps.monotonic() >= deadline)
      throw new InstanceRestartFailedError(
        instanceId,
        `not ${what} within ${timeoutMilliseconds / 1000} s (status ${server.status}, vm_state ${vmState(server)}, task_state ${taskState(server)})`,
      );
    await deps.sleep(deps.pollMilliseconds);
  }
}

/** Sends a server action; a 409 is tolerated when the server is then found as `tolerated` says. */
async function action(
  deps: RestartStepDeps,
  instanceId: string,
  name: 'reset-state' | 'stop' | 'start',
  call: () => Promise<unknown>,
  tolerated: (server: Server | null) => boolean,
): Promise<void> {
  deps.metrics.novaCalls.inc({ action: name });
  try {
    await call();
  } catch (error) {
    if (!(error instanceof NovaApiError) || error.status >= 500) throw error;
    if (error.status === 409 && tolerated(await getServerOrNull(deps.compute, instanceId))) return;
    throw new InstanceRestartFailedError(instanceId, `Nova refused ${name}: ${error.apiMessage}`);
  }
}

/**
 * Masakari's instance recovery through Nova: reset the state to active when it is error or resized,
 * stop unless stopped and wait for SHUTOFF, record that the start is being sent, start and confirm
 * ACTIVE. Each step may be run again by a retried job: the progress record is written before the
 * start, so a retry that finds the server ACTIVE after it does not restart it again.
 * @throws InstanceRestartFailedError (the restart failed), or Nova's / Redis's own error when unreachable
 */
export async function restartThroughNova(
  deps: RestartStepDeps,
  instanceId: string,
  jobId: string,
  steps: { readonly resetToActive: boolean; readonly stop: boolean },
): Promise<void> {
  const { compute } = deps;
  if (steps.resetToActive) {
    await action(
      deps,
      instanceId,
      'reset-state',
      () => compute.resetServerState(instanceId, 'active'),
      () => false,
    );
  }
  if (steps.stop) {
    await action(
      deps,
      instanceId,
      'stop',
      () => compute.stopServer(instanceId),
      (server) => vmState(server) === 'stopped',
    );
    await waitFor(
      deps,
      instanceId,
      'SHUTOFF',
      deps.stopTimeoutMilliseconds,
      (server) => vmState(server) === 'stopped' && taskState(server) === null,
    );
  }
  await deps.records.setProgress(jobId, 'start-sent');
  await action(
    deps,
    instanceId,
    'start',
    () => compute.startServer(instanceId),
    (server) => vmState(server) === 'active',
  );
  await waitFor(
    deps,
    instanceId,
    'ACTIVE',
    deps.startTimeoutMilliseconds,
    (server) => server.status === 'ACTIVE' && taskState(server) === null,
  );
}
