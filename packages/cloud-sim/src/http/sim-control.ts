import type { AddServerOptions, CloudModel } from '../model/cloud-model.ts';
import type { EvacuationFailureMode } from '../model/evacuation-engine.ts';
import type { ReceivedExternalEvent, SimBmc, SimServer } from '../model/records.ts';
import type { InjectedResponse } from './fault-injector.ts';
import type { RequestRecord } from './request-record.ts';

/** Where a host's BMC answers, for fence_redfish and fencing.yaml. */
export interface BmcAccess {
  address: string;
  port: number;
  username: string;
  password: string;
  systemsUri: string;
}

/** One compute host and its liveness, as the control API and the demo show it. */
export interface HostState {
  readonly host: string;
  /** Nova's service state: `up` while its reports are fresh and it is not forced down. */
  readonly state: 'up' | 'down';
  readonly status: 'enabled' | 'disabled';
  /** The nova-compute service's `disabled_reason` (lifeguard's marker while it handles the host). */
  readonly disabledReason: string | null;
  readonly forcedDown: boolean;
  readonly computeRunning: boolean;
  readonly powerState: 'On' | 'Off';
  readonly partitioned: boolean;
  /** How many servers the host holds. */
  readonly servers: number;
}

/** The base URLs of a listening cloud-sim. */
export interface SimUrls {
  /** `http://host:port` */
  readonly api: string;
  /** `.../compute/v2.1` */
  readonly compute: string;
  /** `.../image` */
  readonly image: string;
  /** `.../identity/v3` */
  readonly identity: string;
  /** `.../_sim` */
  readonly control: string;
  /** The Redfish listener's `https://host:port`, or null without BMCs. */
  readonly redfish: string | null;
}

/**
 * The simulated cloud as its API listener drives it: the model, the request record, and the
 * operations of the control API under `/_sim` (implemented by CloudSim, declared here so that the
 * HTTP modules do not import the class that starts them).
 */
export interface SimControl {
  readonly model: CloudModel;
  /** Every API and BMC request received. */
  readonly requests: RequestRecord;
  readonly urls: SimUrls;
  killHost(host: string): void;
  reviveHost(host: string): void;
  partition(hosts: ReadonlyArray<string>): void;
  heal(hosts?: ReadonlyArray<string>): void;
  setApiDelay(milliseconds: number, pathPrefix?: string | null): void;
  injectResponse(response: Omit<InjectedResponse, 'count'> & { count?: number }): void;
  failEvacuations(serverIds: ReadonlyArray<string>, mode?: EvacuationFailureMode, times?: number): void;
  setEvacuationTiming(timing: { acceptMilliseconds?: number; rebuildMilliseconds?: number }): void;
  setBmcQuirks(
    host: string,
    quirks: Partial<Pick<SimBmc, 'alreadyOffStatus' | 'rejectOnAfterForceOff' | 'unreachable'>>,
  ): void;
  bmc(host: string): BmcAccess;
  /** Evacuate calls accepted, per server id. */
  evacuateCalls(): Record<string, number>;
  /** Events received on `POST /os-server-external-events`, oldest first. */
  externalEvents(): ReceivedExternalEvent[];
  addServer(options: AddServerOptions): SimServer;
  hostStates(): HostState[];
}
