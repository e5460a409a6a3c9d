import {
  type AdmissionDecision,
  type AdmissionSnapshot,
  admissionCandidates,
  admit,
  type CandidateFacts,
  type Categorisation,
  type HeartbeatCliffState,
  hostsToRead,
  type Incident,
  type InstanceHaConfig,
  type KdumpClock,
  type KdumpStore,
  type MassEventHolds,
  type SchedulerFacts,
} from '@lifeguard/instance-ha';
import type { Aggregate, ComputeApi } from '@lifeguard/openstack';
import type { Logger } from '@lifeguard/runtime';
import { logAdmission } from './admission-log.ts';
import type { EvacuabilityReader } from './evacuability-reader.ts';

export interface AdmissionDependencies {
  readonly compute: ComputeApi;
  readonly evacuability: EvacuabilityReader;
  readonly kdump: KdumpStore;
  readonly config: InstanceHaConfig;
  readonly logger: Logger;
}

/** One cycle's inputs the poll cycle already read, and the cliff and hold states the last cycle left. */
export interface AdmissionInputs {
  readonly categorisation: Categorisation;
  readonly openIncidents: ReadonlyMap<string, Incident>;
  readonly now: Date;
  /** The leader's fencing token this cycle. */
  readonly fencingToken: number | null;
  /** With CHECK_HEARTBEAT and a running listener: the heartbeats read with the open incidents; else null. */
  readonly heartbeats: AdmissionSnapshot['heartbeats'];
  readonly heartbeatCliff: HeartbeatCliffState;
  readonly massEventHolds: MassEventHolds;
}

/**
 * Reads the facts of the hosts G0–G4 leave in the running, all at once: their servers and the
 * evacuable tags (G5), the aggregates with TAGGED_AGGREGATES (a failed list: no aggregate filtering
 * this cycle, fail-open), the `nova-scheduler` services (a failed read goes on) and, with CHECK_KDUMP,
 * their kdump packets and clocks.
 * @throws the Redis error of a failed kdump read
 */
export async function readCandidateFacts(
  hosts: ReadonlyArray<string>,
  dependencies: AdmissionDependencies,
): Promise<CandidateFacts> {
  const { compute, config, logger, kdump } = dependencies;
  const [reading, aggregates, schedulers, kdumpClocks] = await Promise.all([
    dependencies.evacuability.read(hosts),
    config.taggedAggregates
      ? compute.listAggregates().catch((error: unknown): Aggregate[] | null => {
          logger.warn({ err: error }, 'aggregate list failed: no aggregate filtering this cycle (fail-open)');
          return null;
        })
      : Promise.resolve(null),
    compute
      .listServices({ binary: 'nova-scheduler' })
      .catch((error: unknown): SchedulerFacts => ({ readError: (error as Error).message })),
    config.checkKdump
      ? Promise.all(
          hosts.map(async (host): Promise<[string, KdumpClock]> => {
            const [lastPacketAt, waitStartedAt] = await Promise.all([
              kdump.lastPacketAt(host),
              kdump.waitStartedAt(host),
            ]);
            return [host, { lastPacketAt, waitStartedAt }];
          }),
        ).then((entries) => new Map(entries))
      : Promise.resolve(new Map<string, KdumpClock>()),
  ]);
  return { ...reading, aggregates, schedulers, kdumpClocks };
}

/**
 * One cycle's admission (docs/instance-ha-rules.md#admission-gates): completes the snapshot (the
 * facts of the candidates G0–G4 leave, when there are any), runs instance-ha's pure `admit`,
 * applies the kdump clock updates it asks for and logs what every gate decided. Publishing is the
 * poll cycle's. A clock another replica started first is kept (startWait and restartWait are
 * compare-and-set): the host waits from that start.
 * @throws the Redis error of a kdump read or write the gates cannot do without
 */
export async function runAdmission(
  inputs: AdmissionInputs,
  dependencies: AdmissionDependencies,
): Promise<AdmissionDecision> {
  const { config, kdump, logger } = dependencies;
  const snapshot: AdmissionSnapshot = { ...inputs, config, candidateFacts: null };
  // G0–G4 judged once: they do not depend on the candidates' facts, read only for the hosts they leave.
  const early = admissionCandidates(snapshot);
  const { hosts, needed } = hostsToRead(early);
  const candidateFacts = needed ? await readCandidateFacts(hosts, dependencies) : null;
  const decision = admit({ ...snapshot, candidateFacts }, early);
  for (const update of decision.kdumpClockUpdates) {
    if (update.change === 'clear') await kdump.clearWait(update.host);
    else if (update.stale === null) await kdump.startWait(update.host, inputs.now);
    else await kdump.restartWait(update.host, update.stale, inputs.now);
  }
  logAdmission(decision, candidateFacts, config, logger);
  return decision;
}
