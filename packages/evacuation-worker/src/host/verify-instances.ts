import {
  type EvacuateHostJobData,
  EvacuateInstanceJobResult,
  evacuateInstanceJobId,
} from '@lifeguard/contracts';
import type { Job, Queue } from 'bullmq';
import type { Logger } from 'pino';
import type { EventSink } from '../event-sink.ts';
import { decideInstance, serverHost } from '../instances/decide.ts';
import type { InstanceEvacuator } from '../instances/instance-evacuator.ts';
import { settleAction } from '../instances/settle.ts';
import type { EvacuationMetrics } from '../metrics.ts';
import type { HostEvacuationState, PlannedInstance } from './host-state.ts';

export interface VerifyInstancesInput {
  readonly job: Job;
  readonly data: EvacuateHostJobData;
  /** With `verifyStartedAt` set. */
  readonly state: HostEvacuationState;
  readonly instanceQueue: Queue;
  readonly evacuator: InstanceEvacuator;
  /** SMART_EVACUATION / ORCHESTRATED_RESTART: children already settled what they report evacuated. */
  readonly tracked: boolean;
  /** EVACUATION_TIMEOUT in seconds: how long accepted instances may take to settle. */
  readonly timeoutSeconds: number;
  readonly events: EventSink;
  readonly metrics: EvacuationMetrics;
  readonly logger: Logger;
}

export interface VerifyInstancesOutcome {
  readonly verified: string[];
  readonly deleted: string[];
  readonly failures: Record<string, string>;
  /** Instances still settling: look again after the poll interval. */
  readonly pending: number;
}

const VERIFY_PARALLELISM = 10;

/**
 * The host's instances after their children ended, so that `host.evacuated` is never claimed early:
 * every planned instance is classified from its child's result (or its ignored failure); in tracked
 * modes an `evacuated` / `already-evacuated` child already saw the instance settled; in traditional
 * mode (children succeed when Nova accepts) each accepted instance is read again until it is idle on
 * another host in its original status (restoring SHUTOFF / ERROR as the tracked child would), then
 * unlocked and announced with `instance.evacuated` — or failed after EVACUATION_TIMEOUT counted from
 * the start of verification.
 */
export async function verifyInstances(input: VerifyInstancesInput): Promise<VerifyInstancesOutcome> {
  const { job, data, state } = input;
  const values = (await job.getChildrenValues()) as Record<string, unknown>;
  const ignored = await job.getIgnoredChildrenFailures();
  const verified = new Set(state.verified);
  const deleted = new Set(state.deleted);
  const failures: Record<string, string> = { ...state.failures };
  const toSettle: Array<{ instance: PlannedInstance; result: EvacuateInstanceJobResult }> = [];
  for (const instance of state.plan) {
    if (verified.has(instance.id) || deleted.has(instance.id) || failures[instance.id] !== undefined)
      continue;
    const key = `${input.instanceQueue.qualifiedName}:${evacuateInstanceJobId(instance.id, data.incidentId)}`;
    const failure = ignored[key];
    if (failure !== undefined) {
      failures[instance.id] = failure;
      continue;
    }
    const raw = values[key];
    if (raw === undefined) {
      failures[instance.id] = 'not attempted: the host evacuation stopped before its phase';
      continue;
    }
    const parsed = EvacuateInstanceJobResult.safeParse(raw);
    if (!parsed.success) {
      failures[instance.id] = 'its evacuation job returned an unreadable result';
      continue;
    }
    switch (parsed.data.outcome) {
      case 'deleted':
        deleted.add(instance.id);
        break;
      case 'skipped':
        failures[instance.id] = 'not attempted: the host evacuation had stopped';
        break;
      case 'evacuated':
        verified.add(instance.id);
        break;
      case 'already-evacuated':
        if (input.tracked) verified.add(instance.id);
        else toSettle.push({ instance, result: parsed.data });
        break;
      case 'accepted':
        toSettle.push({ instance, result: parsed.data });
        break;
    }
  }

  const deadline =
    Date.parse(state.verifyStartedAt ?? new Date().toISOString()) + input.timeoutSeconds * 1000;
  let pending = 0;
  for (let index = 0; index < toSettle.length; index += VERIFY_PARALLELISM) {
    const batch = toSettle.slice(index, index + VERIFY_PARALLELISM);
    const outcomes = await Promise.all(
      batch.map((each) => settleOne(input, each.instance, each.result, deadline)),
    );
    batch.forEach(({ instance }, position) => {
      const outcome = outcomes[position]!;
      if (outcome.kind === 'settled') verified.add(instance.id);
      else if (outcome.kind === 'deleted') deleted.add(instance.id);
      else if (outcome.kind === 'failed') failures[instance.id] = outcome.reason;
      else pending++;
    });
  }
  return { verified: [...verified], deleted: [...deleted], failures, pending };
}

type SettleOutcome =
  | { kind: 'settled' }
  | { kind: 'deleted' }
  | { kind: 'waiting' }
  | { kind: 'failed'; reason: string };

async function settleOne(
  input: VerifyInstancesInput,
  instance: PlannedInstance,
  result: EvacuateInstanceJobResult,
  deadline: number,
): Promise<SettleOutcome> {
  const { data, evacuator, logger } = input;
  const log = logger.child({ instanceId: instance.id });
  const target = {
    instanceId: instance.id,
    instanceName: instance.name,
    failedHost: data.host,
    originalStatus: instance.status,
    targetHost: null,
    fencedAt: new Date(data.fencedAt),
  };
  let outcome: SettleOutcome;
  let landedOn: string | null = null;
  try {
    const observed = await evacuator.read(target);
    if (observed === 'deleted') return { kind: 'deleted' };
    const decision = decideInstance(observed.server, observed.latest, data.host, true);
    if (decision.kind === 'landed') {
      landedOn = serverHost(observed.server);
      const action = settleAction(observed.server, instance.status);
      if (action.kind === 'settled') outcome = { kind: 'settled' };
      else if (action.kind === 'failed') outcome = { kind: 'failed', reason: action.reason };
      else {
        if (action.kind === 'stop' || action.kind === 'reset-error')
          await evacuator.restore(instance.id, action.kind, log);
        outcome = { kind: 'waiting' };
      }
    } else if (decision.kind === 'in-progress') {
      outcome = { kind: 'waiting' };
    } else {
      outcome = { kind: 'failed', reason: `the accepted evacuation did not complete: ${decision.reason}` };
    }
  } catch (error) {
    log.warn({ err: error }, `could not read ${instance.id} while verifying its evacuation`);
    outcome = { kind: 'waiting' };
  }
  if (outcome.kind === 'waiting' && Date.now() > deadline) {
    outcome = {
      kind: 'failed',
      reason: `not settled on another host within EVACUATION_TIMEOUT (${input.timeoutSeconds} s)`,
    };
  }
  if (outcome.kind === 'settled') {
    await evacuator.unlock(instance.id, log);
    const durationSeconds = Math.max(0, (Date.now() - Date.parse(input.state.startedAt)) / 1000);
    input.metrics.instances.inc({ result: 'succeeded' });
    input.metrics.instanceDuration.observe({ result: 'succeeded' }, durationSeconds);
    await input.events.publish('instance.evacuated', {
      host: data.host,
      incidentId: data.incidentId,
      instanceId: instance.id,
      instanceName: instance.name,
      targetHost: landedOn,
      migrationStatus: result.migrationStatus,
      attempts: result.attempts,
      novaRequestId: result.novaRequestId,
      durationSeconds,
    });
  } else if (outcome.kind === 'failed') {
    await evacuator.unlock(instance.id, log);
    input.metrics.instances.inc({ result: 'failed' });
    log.error(
      `Instance ${instance.id} (${instance.name}) of ${data.host} was not evacuated: ${outcome.reason}`,
    );
    await input.events.publish('instance.evacuation.failed', {
      host: data.host,
      incidentId: data.incidentId,
      instanceId: instance.id,
      instanceName: instance.name,
      reason: outcome.reason,
      attempts: result.attempts,
      novaRequestId: result.novaRequestId,
    });
  }
  return outcome;
}
