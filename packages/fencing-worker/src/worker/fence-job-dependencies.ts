import type { IncidentStore, KdumpStore } from '@lifeguard/instance-ha';
import type { ComputeApi } from '@lifeguard/openstack';
import type {
  ActionClaims,
  DeploymentGeneration,
  EventPublisher,
  Logger,
  RedisClient,
} from '@lifeguard/runtime';
import type { Queue } from 'bullmq';
import type { HostFencer } from '../fencing/host-fencer.ts';
import type { FenceRecheck } from './fence-recheck.ts';
import type { FencingMetrics } from './fencing-metrics.ts';

/** What the fence job needs. */
export interface FenceJobDependencies {
  incidents: IncidentStore;
  kdump: KdumpStore;
  fencer: HostFencer;
  compute: ComputeApi;
  events: Pick<EventPublisher, 'publish'>;
  /** The `evacuation` BullMQ queue the fenced host is handed to. */
  evacuationQueue: Queue;
  redis: RedisClient;
  keyPrefix: string;
  logger: Logger;
  metrics: FencingMetrics;
  /** Every fencing.yaml password, scrubbed from anything published or logged. */
  secrets: ReadonlyArray<string>;
  /** CHECK_KDUMP and KDUMP_TIMEOUT (config.yaml). */
  checkKdump: boolean;
  kdumpTimeoutSeconds: number;
  /** Packet look-up interval of the kdump wait, in milliseconds (default 1000). */
  kdumpPollMilliseconds?: number;
  /** The gates every fence passes again at the moment it would run (see FenceRecheck). */
  recheck: FenceRecheck;
  /** How long a fence held back by a gate that can change waits before it checks again, seconds (POLL). */
  deferSeconds: number;
  /** The deployment generation marker: no fence runs while Redis' memory is lost and not rebuilt. */
  generation?: DeploymentGeneration;
  /** The incidents' power-off claims: one run of a fence job powers its host off (GuardedPowerOff). */
  claims: ActionClaims;
  /** This process's name (LIFEGUARD_INSTANCE_NAME), shown to a run that finds a power-off claim held. */
  processName: string;
  /** The job lock's duration (LIFEGUARD_JOB_LOCK_SECONDS), in milliseconds: checked before a power-off. */
  jobLockMilliseconds: number;
}
