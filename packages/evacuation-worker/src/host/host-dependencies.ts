import type { IncidentStore, InstanceHaConfig } from '@lifeguard/instance-ha';
import type { ComputeApi, IdentityApi, ImageApi } from '@lifeguard/openstack';
import type { Queue } from 'bullmq';
import type { Logger } from 'pino';
import type { EventSink } from '../event-sink.ts';
import type { InstanceEvacuator } from '../instances/instance-evacuator.ts';
import type { EvacuationMetrics } from '../metrics.ts';
import type { EvacuationWorkerSettings } from '../settings.ts';
import type { HostPlacement } from './host-placement.ts';
import type { ReservedHostManager } from './reserved-host-manager.ts';
import type { HeartbeatTimesSource } from './safety-checks.ts';
import type { StopFlags } from './stop-flags.ts';

/** What a host's evacuation works with: the HostEvacuationProcessor's steps and its HostOutcome. */
export interface HostEvacuationDependencies {
  readonly compute: ComputeApi;
  readonly image: ImageApi | null;
  /** Keystone, for the project names of SKIP_SERVERS_IN_PROJECT; null: items are project ids only. */
  readonly identity: IdentityApi | null;
  readonly config: InstanceHaConfig;
  readonly settings: EvacuationWorkerSettings;
  readonly incidents: IncidentStore;
  readonly reserved: ReservedHostManager;
  /** Where the instances go: the segment's directive, or RESERVED_HOSTS' pool. */
  readonly placement: HostPlacement;
  readonly stopFlags: StopFlags;
  readonly events: EventSink;
  readonly metrics: EvacuationMetrics;
  readonly logger: Logger;
  /** Where `evacuate-instance` children are added. */
  readonly instanceQueue: Queue;
  /** Where the `power-on` child is added. */
  readonly fencingQueue: Queue;
  readonly evacuator: InstanceEvacuator;
  /** The node monitors' last heartbeats for the safety re-check, with CHECK_HEARTBEAT; else null. */
  readonly heartbeats: HeartbeatTimesSource;
}
