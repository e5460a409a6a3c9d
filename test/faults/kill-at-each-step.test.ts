// The fault suite: each Instance HA worker SIGKILLed at each step of an incident. lifeguard runs as
// `npm start` runs it on the simulated cloud (every worker its own process, cloud-sim with the demo
// layout, the real fence_redfish against the simulated BMCs), with the launcher's restart policy on,
// as an operator runs it. Per case one protected host's nova-compute dies; the worker doing the step
// is killed at the request that step sends to the cloud (held until the process is gone, so it never
// hears the answer), the launcher starts it again, and the incident must end re-enabled with every
// evacuable server evacuated once, the host switched off once and on once, and every transition
// journalled once under one id. Nova's timings are shortened (report every second, down after 4 s,
// DELTA 4 s, POLL 1 s) and the job locks are 5 s, so a dead worker's job is taken over within seconds.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RecordedRequest } from '@lifeguard/cloud-sim';
import { FAST_CLOUD_TIMINGS, FAST_INSTANCE_HA } from '@lifeguard/testing';
import { SimulatedDeployment } from '../e2e/support/simulated-deployment.ts';
import { recordFaultRow } from './support/fault-table.ts';
import {
  countOutcome,
  type KillStep,
  killAtStep,
  type StepTarget,
  secondsToFirstEventAfterKill,
} from './support/kill-at-step.ts';

/** A BMC's `ComputerSystem.Reset` of the target host with this reset type. */
const bmcReset = (request: RecordedRequest, target: StepTarget, resetType: string) =>
  request.listener === 'redfish' &&
  request.method === 'POST' &&
  request.url === `/redfish/v1/Systems/${target.systemId}/Actions/ComputerSystem.Reset` &&
  (request.body as { ResetType?: string } | undefined)?.ResetType === resetType;

/** A `PUT /os-services/{id}` of the target's compute service whose body has this field and value. */
const serviceUpdate = (request: RecordedRequest, target: StepTarget, field: string, value: unknown) =>
  request.listener === 'api' &&
  request.method === 'PUT' &&
  request.url.endsWith(`/os-services/${target.serviceId}`) &&
  (request.body as Record<string, unknown> | undefined)?.[field] === value;

/** Whether the request is an evacuate action on one of the target's servers. */
const evacuate = (request: RecordedRequest, target: StepTarget) =>
  request.listener === 'api' &&
  request.method === 'POST' &&
  target.evacuable.some((id) => request.url.endsWith(`/servers/${id}/action`)) &&
  typeof (request.body as { evacuate?: unknown } | undefined)?.evacuate === 'object';

/** The second evacuate request the cloud accepted for the target (the first one already went through). */
function secondAcceptedEvacuate(): KillStep['moment'] {
  let accepted = 0;
  return (request, phase, target) =>
    phase === 'after-effect' && evacuate(request, target) && request.status === 200 && ++accepted === 2;
}

const STEPS: ReadonlyArray<KillStep> = [
  {
    step: 'mid fence: the BMC switched the host off, the worker never heard',
    worker: 'fencing-worker',
    moment: (request, phase, target) => phase === 'after-effect' && bmcReset(request, target, 'ForceOff'),
  },
  {
    step: 'after fence: fence recorded and host.fenced published, forced_down not sent',
    worker: 'fencing-worker',
    moment: (request, phase, target) =>
      phase === 'before-effect' && serviceUpdate(request, target, 'forced_down', true),
    drop: true,
  },
  {
    step: 'after forced_down: the service forced down, not yet disabled with the marker',
    worker: 'fencing-worker',
    moment: (request, phase, target) =>
      phase === 'after-effect' && serviceUpdate(request, target, 'forced_down', true),
  },
  {
    step: 'mid evacuation: 2 of 4 evacuate requests accepted',
    worker: 'evacuation-worker',
    moment: secondAcceptedEvacuate(),
  },
  {
    step: 'mid power-on: the BMC switched the host on, the worker never heard',
    worker: 'fencing-worker',
    moment: (request, phase, target) => phase === 'after-effect' && bmcReset(request, target, 'On'),
  },
  {
    step: 'mid re-enable, forced_down lifted: the service not yet enabled',
    worker: 'evacuation-worker',
    moment: (request, phase, target) =>
      phase === 'after-effect' && serviceUpdate(request, target, 'forced_down', false),
  },
  {
    step: 'mid re-enable, service enabled: host.reenabled not yet published',
    worker: 'evacuation-worker',
    moment: (request, phase, target) =>
      phase === 'after-effect' && serviceUpdate(request, target, 'status', 'enabled'),
  },
  {
    step: 'mid incident: while the fencing worker switches the host off',
    worker: 'node-monitor',
    moment: (request, phase, target) => phase === 'before-effect' && bmcReset(request, target, 'ForceOff'),
  },
];

describe('a worker SIGKILLed at each step of an incident', { timeout: 1_500_000 }, () => {
  let deployment: SimulatedDeployment;

  before(async () => {
    deployment = await SimulatedDeployment.start({
      label: 'fault-kill',
      cloud: {
        hosts: 12,
        serversPerHost: 5,
        ...FAST_CLOUD_TIMINGS,
      },
      instanceHa: { ...FAST_INSTANCE_HA },
      restartWorkers: { attempts: 5, firstDelaySeconds: 1 },
      workerEnvironment: {
        'fencing-worker': {
          LIFEGUARD_JOB_LOCK_SECONDS: '5',
          LIFEGUARD_JOB_STALLED_CHECK_SECONDS: '2',
          LIFEGUARD_FENCING_BACKOFF_SECONDS: '1',
        },
        'evacuation-worker': {
          LIFEGUARD_JOB_LOCK_SECONDS: '5',
          LIFEGUARD_JOB_STALLED_CHECK_SECONDS: '2',
          // An instance whose evacuate the killed worker had claimed but not yet sent is evacuated by
          // the restarted one once the claim runs out (180 s by default): shortened here as the lock is.
          LIFEGUARD_EVACUATE_CLAIM_SECONDS: '20',
        },
        'node-monitor': { LIFEGUARD_NODE_MONITOR_LEASE_TTL_SECONDS: '3' },
      },
    });
  });

  after(async () => {
    await deployment?.stop();
  });

  STEPS.forEach((kill, index) => {
    it(`${kill.worker} killed ${kill.step}: the incident completes after the restart, each instance evacuated once, the host fenced once, each transition published once under one id`, async (t) => {
      const { sim, layout } = deployment;
      const host = layout.protectedHosts[index % layout.protectedHosts.length]!;
      const record = sim.model.host(host);
      const target: StepTarget = {
        host,
        serviceId: record.serviceId,
        systemId: record.bmc.systemId,
        evacuable: sim.model.servers
          .onHost(host)
          .filter((server) => deployment.evacuable(server))
          .map((server) => server.id),
      };
      assert.equal(target.evacuable.length, 4, 'four evacuable servers on the host');

      const outcome = await killAtStep(deployment, target, kill);
      const counted = countOutcome(outcome, target);
      // The kill is the whole fault: the time to resume runs from it, through the launcher's restart
      // (and the job lock's expiry), to the next step of the incident.
      const secondsToResume =
        kill.worker === 'node-monitor'
          ? secondsToLeadingAgain(deployment, outcome.killedAt)
          : secondsToFirstEventAfterKill(outcome, outcome.killedAt);
      const secondsToRestart = (outcome.readyAgainAt - outcome.killedAt) / 1000;
      t.diagnostic(
        `killed ${kill.worker} ${kill.step}; ready again after ${secondsToRestart.toFixed(2)} s, work resumed ${secondsToResume.toFixed(2)} s after the kill; journal: ${outcome.journal.map((event) => event.type).join(', ')}`,
      );
      recordFaultRow({
        fault: `${kill.worker} SIGKILLed ${kill.step.split(':')[0]}`,
        inFlight: `1 incident (${target.evacuable.length} instances)`,
        eventsLost: counted.eventsLost,
        duplicateEffects: counted.duplicateEffects,
        secondsToResume: Number(secondsToResume.toFixed(2)),
        outcome:
          counted.eventsLost + counted.duplicateEffects === 0
            ? `restarted by the launcher in ${secondsToRestart.toFixed(1)} s; incident re-enabled`
            : `lost: ${counted.missing.join(', ') || 'none'}; twice: ${counted.duplicated.join(', ') || 'none'}`,
      });

      assert.deepEqual(counted.missing, [], 'every transition of the incident was published and journalled');
      assert.deepEqual(counted.duplicated, [], 'no effect twice, no transition under two ids');
      for (const [serverId, calls] of Object.entries(outcome.evacuateCalls)) {
        assert.equal(calls, 1, `${serverId} evacuated exactly once`);
        assert.notEqual(sim.model.servers.get(serverId)!.host, host, `${serverId} runs elsewhere`);
      }
      assert.deepEqual(outcome.powerActions, { off: 1, on: 1 }, 'switched off once, on once');
      assert.equal(outcome.incidentsOpened, 1, 'one incident');
      const service = sim.hostStates().find((state) => state.host === host)!;
      assert.deepEqual(
        [service.state, service.status, service.forcedDown, service.powerState, service.disabledReason],
        ['up', 'enabled', false, 'On', null],
        'the host is back: up, enabled, not forced down, powered on, no marker',
      );
    });
  });
});

/**
 * Seconds from `from` until a node monitor completed a poll cycle as the leader again (its log line
 * `Poll cycle completed`, written only by the replica that holds the lease).
 */
function secondsToLeadingAgain(deployment: SimulatedDeployment, from: number): number {
  const cycle = deployment.run
    .records('node-monitor')
    .find(
      (record) =>
        Date.parse(String(record.time)) >= from && String(record.msg).startsWith('Poll cycle completed'),
    );
  assert.ok(cycle, 'the restarted node monitor polls again');
  return Math.max(0, (Date.parse(String(cycle.time)) - from) / 1000);
}
