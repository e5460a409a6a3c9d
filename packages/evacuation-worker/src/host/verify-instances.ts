import {
  type EvacuateHostJobData,
  EvacuateInstanceJobResult,
  evacuateInstanceJobId,
} from '@lifeguard/contracts';
import type { Job, Queue } from 'bullmq';
import type { Logger } from 'pino';
import type { EventSink } from '../event-sink.ts';
import { announceDeleted } from '../instances/announce-deleted.ts';
import { announceEvacuated } from '../instances/announce-evacuated.ts';
import { decideInstance, describeServer, serverHost } from '../instances/decide.ts';
import type { IncidentInstance } from '../instances/incident-instance.ts';
import type { InstanceEvacuator } from '../instances/instance-evacuator.ts';
import type { InstanceReads } from '../instances/instance-reads.ts';
import { RESTORE_GRACE_SECONDS, settleAction } from '../instances/settle.ts';
import type { EvacuationMetrics } from '../metrics.ts';
import type { EvacuationPolicy } from '../policy/evacuation-policy.ts';
import type { HostEvacuationState, PlannedInstance, VerifyingInstance } from './host-state.ts';

export interface VerifyInstancesInput {
  readonly job: Job;
  readonly data: EvacuateHostJobData;
  /** With `verifyStartedAt` set. */
  readonly state: HostEvacuationState;
  readonly instanceQueue: Queue;
  readonly evacuator: InstanceEvacuator;
  /**
   * followsEvacuationToCompletion: children already settled what they report evacuated; timeoutSeconds
   * (EVACUATION_TIMEOUT): how long accepted instances may take to land on another host;
   * maxConsecutiveApiErrors: consecutive failed reads of one instance that fail it.
   */
  readonly policy: Pick<
    EvacuationPolicy,
    'followsEvacuationToCompletion' | 'timeoutSeconds' | 'maxConsecutiveApiErrors'
  >;
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
  /** What is kept of each pending instance between two looks (the host state's `verifying`). */
  readonly verifying: Record<string, VerifyingInstance>;
}

const VERIFY_PARALLELISM = 10;

/**
 * The host's instances after their children ended, so that `host.evacuated` is never claimed early:
 * every planned instance is classified from its child's result (or its ignored failure); when the
 * policy follows evacuations to completion (smart, orchestrated, docs/instance-ha-rules.md#evacuation-policy)
 * an `evacuated` / `already-evacuated` child already saw the instance settled; otherwise (traditional:
 * children succeed when Nova accepts) each accepted instance is read again every poll until it
 * is idle on another host in its original status (restoring SHUTOFF / ERROR as a followed child
 * would), then unlocked and announced with `instance.evacuated`. Nova is read before any deadline is
 * judged, so a verification resumed late (a restart or a takeover) still accepts what landed
 * meanwhile: EVACUATION_TIMEOUT, counted from the start of verification, fails only an instance a
 * look shows not landed; a landed one gets RESTORE_GRACE_SECONDS from when it was first seen landed
 * to return to its status; a failed read is no verdict (MAX_CONSECUTIVE_API_ERRORS in a row fail it).
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
        if (input.policy.followsEvacuationToCompletion) verified.add(instance.id);
        else toSettle.push({ instance, result: parsed.data });
        break;
      case 'accepted':
        toSettle.push({ instance, result: parsed.data });
        break;
    }
  }

  const deadline =
    Date.parse(state.verifyStartedAt ?? new Date().toISOString()) + input.policy.timeoutSeconds * 1000;
  let pending = 0;
  const verifying: Record<string, VerifyingInstance> = {};
  for (let index = 0; index < toSettle.length; index += VERIFY_PARALLELISM) {
    const batch = toSettle.slice(index, index + VERIFY_PARALLELISM);
    const outcomes = await Promise.all(
      batch.map((each) =>
        settleOne(
          input,
          each.instance,
          each.result,
          deadline,
          state.verifying[each.instance.id] ?? { landedAt: null, readErrors: 0 },
        ),
      ),
    );
    batch.forEach(({ instance }, position) => {
      const outcome = outcomes[position]!;
      if (outcome.kind === 'settled') verified.add(instance.id);
      else if (outcome.kind === 'deleted') deleted.add(instance.id);
      else if (outcome.kind === 'failed') failures[instance.id] = outcome.reason;
      else {
        pending++;
        verifying[instance.id] = outcome.watch;
      }
    });
  }
  return { verified: [...verified], deleted: [...deleted], failures, pending, verifying };
}

type SettleOutcome =
  | { kind: 'settled' }
  | { kind: 'deleted' }
  | { kind: 'waiting'; watch: VerifyingInstance }
  | { kind: 'failed'; reason: string };

/** One look at an accepted instance: Nova first, then the verdict (deadlines only on what was read). */
async function lookAt(
  input: VerifyInstancesInput,
  instance: PlannedInstance,
  deadline: number,
  watch: VerifyingInstance,
  log: Logger,
): Promise<{ outcome: SettleOutcome; landedOn: string | null }> {
  const { data, evacuator } = input;
  const target = {
    instanceId: instance.id,
    instanceName: instance.name,
    failedHost: data.host,
    originalStatus: instance.status,
    targetHost: null,
    fencedAt: new Date(data.fencedAt),
  };
  let observed: Awaited<ReturnType<InstanceReads['read']>>;
  try {
    observed = await evacuator.reads.read(target);
  } catch (error) {
    const readErrors = watch.readErrors + 1;
    log.warn({ err: error, readErrors }, `could not read ${instance.id} while verifying its evacuation`);
    const outcome: SettleOutcome =
      readErrors >= input.policy.maxConsecutiveApiErrors
        ? {
            kind: 'failed',
            reason: `${readErrors} consecutive Nova API errors while verifying: ${(error as Error).message}`,
          }
        : { kind: 'waiting', watch: { ...watch, readErrors } };
    return { outcome, landedOn: null };
  }
  if (observed === 'deleted') return { outcome: { kind: 'deleted' }, landedOn: null };
  const { server, latest } = observed;
  const now = Date.now();
  const decision = decideInstance(server, latest, data.host, true);
  if (decision.kind === 'evacuate') {
    return {
      outcome: { kind: 'failed', reason: `the accepted evacuation did not complete: ${decision.reason}` },
      landedOn: null,
    };
  }
  if (decision.kind === 'in-progress') {
    if (now <= deadline)
      return { outcome: { kind: 'waiting', watch: { ...watch, readErrors: 0 } }, landedOn: null };
    return {
      outcome: {
        kind: 'failed',
        reason: `not settled on another host within EVACUATION_TIMEOUT (${input.policy.timeoutSeconds} s): its evacuation is still under way (${describeServer(server)}, migration ${latest?.status ?? 'not listed'})`,
      },
      landedOn: null,
    };
  }
  // Landed: idle on another host. Only returning to its original status remains.
  const landedOn = serverHost(server);
  const action = settleAction(server, instance.status);
  if (action.kind === 'settled') return { outcome: { kind: 'settled' }, landedOn };
  if (action.kind === 'failed') return { outcome: { kind: 'failed', reason: action.reason }, landedOn };
  const landedAt = watch.landedAt ?? new Date(now).toISOString();
  if (now > Math.max(deadline, Date.parse(landedAt) + RESTORE_GRACE_SECONDS * 1000)) {
    return {
      outcome: {
        kind: 'failed',
        reason: `landed on ${landedOn} but did not return to ${instance.status} in time`,
      },
      landedOn,
    };
  }
  if (action.kind === 'stop' || action.kind === 'reset-error')
    await evacuator.restore(instance.id, action.kind, log);
  return { outcome: { kind: 'waiting', watch: { landedAt, readErrors: 0 } }, landedOn };
}

async function settleOne(
  input: VerifyInstancesInput,
  instance: PlannedInstance,
  result: EvacuateInstanceJobResult,
  deadline: number,
  watch: VerifyingInstance,
): Promise<SettleOutcome> {
  const { data, evacuator } = input;
  const log = input.logger.child({ instanceId: instance.id });
  const { outcome, landedOn } = await lookAt(input, instance, deadline, watch, log);
  const incidentInstance: IncidentInstance = {
    host: data.host,
    incidentId: data.incidentId,
    instanceId: instance.id,
    instanceName: instance.name,
  };
  if (outcome.kind === 'settled') {
    await evacuator.unlock(instance.id, log);
    const durationSeconds = Math.max(0, (Date.now() - Date.parse(input.state.startedAt)) / 1000);
    input.metrics.instances.inc({ result: 'succeeded' });
    input.metrics.instanceDuration.observe({ result: 'succeeded' }, durationSeconds);
    await announceEvacuated(
      input.events,
      incidentInstance,
      {
        targetHost: landedOn,
        migrationStatus: result.migrationStatus,
        attempts: result.attempts,
        novaRequestId: result.novaRequestId,
      },
      durationSeconds,
    );
  } else if (outcome.kind === 'deleted') {
    input.metrics.instances.inc({ result: 'deleted' });
    await announceDeleted(input.events, log, incidentInstance, result);
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
