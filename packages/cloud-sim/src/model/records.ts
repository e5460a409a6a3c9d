/** The records of the simulated cloud. Field meanings follow Nova, Glance and Keystone. */

/** A compute host: its nova-compute service, its hypervisor and its BMC. */
export interface SimHost {
  name: string;
  /** Index in creation order (service and hypervisor listings follow it). */
  order: number;
  /** Service UUID (the `id` from microversion 2.53 on). */
  serviceId: string;
  /** The integer service id of microversions before 2.53. */
  serviceNumber: number;
  hypervisorId: string;
  hostIp: string;
  disabled: boolean;
  disabledReason: string | null;
  forcedDown: boolean;
  /** The nova-compute process runs (false after kill-host or power off). */
  computeRunning: boolean;
  /** The machine's power, as its BMC reports it. */
  poweredOn: boolean;
  /** Cut off from the control plane: heartbeats do not arrive, the BMC stays reachable. */
  partitioned: boolean;
  /** Start (epoch milliseconds) of the current heartbeat period; reports at epoch + k × report interval. */
  heartbeatEpoch: number;
  /** The last report before heartbeats stopped, or null while they flow. */
  frozenHeartbeat: number | null;
  /** Last update of the service record through the API (epoch milliseconds), or null. */
  serviceUpdatedAt: number | null;
  createdAt: number;
  bmc: SimBmc;
}

/** Per-host Redfish BMC state and quirks. */
export interface SimBmc {
  username: string;
  password: string;
  /** The ComputerSystem's UUID and id segment (`/redfish/v1/Systems/<systemId>`). */
  systemId: string;
  uuid: string;
  /** How the BMC answers ForceOff when already off: 204 (success), 400 (iLO) or 409 (iDRAC). */
  alreadyOffStatus: 204 | 400 | 409;
  /** How many `On` requests right after a ForceOff are rejected with 400 (some BMCs do). */
  rejectOnAfterForceOff: number;
  /** Rejections left for the current off period. */
  onRejectionsLeft: number;
  /** Answers no requests at all (connection reset) while true. */
  unreachable: boolean;
}

export type VmState =
  | 'active'
  | 'building'
  | 'stopped'
  | 'error'
  | 'paused'
  | 'suspended'
  | 'shelved_offloaded';

export interface SimFlavor {
  id: string;
  name: string;
  ram: number;
  vcpus: number;
  disk: number;
  ephemeral: number;
  swap: number;
  isPublic: boolean;
  description: string | null;
  extraSpecs: Record<string, string>;
}

export interface SimServer {
  id: string;
  name: string;
  tenantId: string;
  userId: string;
  metadata: Record<string, string>;
  /** Nova's server tags (shown from 2.26, given at boot from 2.52). */
  tags: string[];
  /** The last fault (shown while the server is ERROR): set when an evacuation ends in error. */
  fault: { code: number; message: string; created: number } | null;
  imageId: string;
  /** The flavor as it was at boot (servers embed it from 2.47). */
  flavor: {
    vcpus: number;
    ram: number;
    disk: number;
    ephemeral: number;
    swap: number;
    original_name: string;
    extra_specs: Record<string, string>;
  };
  host: string | null;
  vmState: VmState;
  taskState: string | null;
  /** 0 NOSTATE, 1 RUNNING, 3 PAUSED, 4 SHUTDOWN, 7 SUSPENDED. */
  powerState: number;
  locked: boolean;
  lockedReason: string | null;
  availabilityZone: string;
  createdAt: number;
  updatedAt: number;
  launchedAt: number | null;
  instanceNumber: number;
}

export type MigrationStatus = 'accepted' | 'pre-migrating' | 'done' | 'completed' | 'error' | 'failed';

export interface SimMigration {
  id: number;
  uuid: string;
  instanceUuid: string;
  sourceCompute: string;
  destCompute: string | null;
  destHost: string | null;
  status: MigrationStatus;
  migrationType: 'evacuation';
  createdAt: number;
  updatedAt: number;
}

export interface SimAggregate {
  id: number;
  uuid: string;
  name: string;
  availabilityZone: string | null;
  hosts: string[];
  metadata: Record<string, string>;
  createdAt: number;
  updatedAt: number | null;
}

export interface SimImage {
  id: string;
  name: string | null;
  status: 'queued' | 'active';
  visibility: string;
  tags: string[];
  properties: Record<string, string>;
  diskFormat: string | null;
  containerFormat: string | null;
  createdAt: number;
  updatedAt: number;
  /** Creation order, the tie-breaker of Glance's default `created_at desc` sort. */
  order: number;
}

/** An event received on `POST /os-server-external-events`, with Nova's per-event answer code. */
export interface ReceivedExternalEvent {
  name: string;
  server_uuid: string;
  status: string;
  tag: string | null;
  code: number;
  receivedAt: string;
}
