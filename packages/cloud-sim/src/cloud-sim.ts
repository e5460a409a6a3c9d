import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { buildApiServer } from './http/api-server.ts';
import { FaultInjector, type InjectedResponse } from './http/fault-injector.ts';
import { RequestRecord } from './http/request-record.ts';
import type { SimContext } from './http/sim-context.ts';
import type { BmcAccess, HostState, SimControl, SimUrls } from './http/sim-control.ts';
import { type AddServerOptions, CloudModel, type CloudModelSettings } from './model/cloud-model.ts';
import type { EvacuationFailureMode } from './model/evacuation-engine.ts';
import { IdentityStore, type SimUser } from './model/identity-store.ts';
import type { SimBmc, SimServer } from './model/records.ts';
import { startRedfishServer } from './redfish/redfish-server.ts';
import { seedCloud } from './seed.ts';

export interface CloudSimOptions {
  /** Listen address of every listener (default 127.0.0.1). */
  listenHost?: string;
  /** Port of the API listener (Nova, Glance, Keystone, control); 0 picks a free one (default). */
  port?: number;
  /** Port of the HTTPS Redfish listener; 0 picks a free one (default); false: no BMCs. */
  redfishPort?: number | false;
  /** Compute hosts: a count (`compute1`..`computeN`, default 3) or names. */
  hosts?: number | string[];
  /** Servers spread round-robin over the hosts at start (default 0). */
  servers?: number;
  model?: Partial<CloudModelSettings>;
  /** How Nova authenticates (default `noauth2`; `keystone` needs tokens from /identity). */
  auth?: 'noauth2' | 'keystone';
  /** Keystone token lifetime in seconds (default 3600). */
  tokenLifetimeSeconds?: number;
  /** Keystone user `admin`'s password (default `admin`), project `admin`. */
  adminPassword?: string;
  /**
   * The model's clock, milliseconds (default Date.now): a test that decides on an injected clock gives
   * the cloud the same one, so reports, `updated_at` and service states follow it.
   */
  now?: () => number;
}

/**
 * A running simulated cloud: the HTTP APIs and the programmatic control of its model.
 * Start it with startCloudSim(); stop it with close().
 */
export class CloudSim implements SimControl {
  readonly model: CloudModel;
  readonly identity: IdentityStore;
  readonly faults = new FaultInjector();
  /** Every API and BMC request received, with observers that can hold or drop one (fault tests). */
  readonly requests = new RequestRecord();
  readonly context: SimContext;
  readonly admin: SimUser;
  private api: FastifyInstance | null = null;
  private redfish: FastifyInstance | null = null;
  private listenHost = '127.0.0.1';

  constructor(readonly options: CloudSimOptions = {}) {
    this.model = new CloudModel(options.model, options.now);
    this.identity = new IdentityStore(options.tokenLifetimeSeconds ?? 3600);
    const project = this.identity.addProject('admin');
    this.admin = this.identity.addUser('admin', options.adminPassword ?? 'admin', project);
    this.context = {
      model: this.model,
      identity: this.identity,
      auth: options.auth ?? 'noauth2',
      faults: this.faults,
      baseUrl: '',
    };
    seedCloud(this.model, options.hosts ?? 3, options.servers ?? 0);
  }

  /** Starts the listeners. */
  async listen(): Promise<this> {
    this.listenHost = this.options.listenHost ?? '127.0.0.1';
    this.api = buildApiServer(this, this.context);
    await this.api.listen({ host: this.listenHost, port: this.options.port ?? 0 });
    const port = (this.api.server.address() as AddressInfo).port;
    this.context.baseUrl = `http://${this.listenHost}:${port}`;
    if (this.options.redfishPort !== false) {
      this.redfish = await startRedfishServer(this.model, {
        host: this.listenHost,
        port: this.options.redfishPort ?? 0,
        requests: this.requests,
      });
    }
    return this;
  }

  /** Base URLs: `api` (`http://host:port`), `compute` (`.../compute/v2.1`), `image`, `identity` (`.../identity/v3`), `control`, `redfish`. */
  get urls(): SimUrls {
    const api = this.context.baseUrl;
    const redfishPort = this.redfish ? (this.redfish.server.address() as AddressInfo).port : null;
    return {
      api,
      compute: `${api}/compute/v2.1`,
      image: `${api}/image`,
      identity: `${api}/identity/v3`,
      control: `${api}/_sim`,
      redfish: redfishPort === null ? null : `https://${this.listenHost}:${redfishPort}`,
    };
  }

  /**
   * A clouds.yaml-style cloud entry for @lifeguard/openstack: `admin_token` (noauth2, token
   * `admin:admin`, explicit endpoints) or `password` (the simulated Keystone; user admin).
   */
  cloudEntry(
    kind: 'admin_token' | 'password' = this.context.auth === 'keystone' ? 'password' : 'admin_token',
  ) {
    if (kind === 'password') {
      return {
        auth_type: 'password',
        auth: {
          auth_url: this.urls.identity,
          username: 'admin',
          password: this.options.adminPassword ?? 'admin',
          project_name: 'admin',
          user_domain_name: 'Default',
          project_domain_name: 'Default',
        },
        region_name: 'RegionOne',
        interface: 'public',
        identity_api_version: 3,
      };
    }
    return {
      auth_type: 'admin_token',
      auth: { token: 'admin:admin', endpoint: this.urls.compute },
      image_endpoint_override: this.urls.image,
      identity_endpoint_override: this.urls.identity,
    };
  }

  // ------------------------------------------------------------------ fault injection

  /** nova-compute of the host dies: heartbeats stop; its power stays on until fenced. */
  killHost(host: string): void {
    this.model.killHost(host);
  }

  /** nova-compute of the host (re)starts: evacuated instances are cleaned up (migrations done → completed). */
  reviveHost(host: string): void {
    this.model.reviveHost(host);
  }

  /**
   * Partitions hosts from the control plane (heartbeats stop arriving; power and BMC unaffected).
   * @throws UnknownHostError when any name is unknown (then no host is changed)
   */
  partition(hosts: ReadonlyArray<string>): void {
    this.model.setPartitioned(hosts, true);
  }

  /**
   * Ends a partition (default: every partitioned host); nova-compute did not restart.
   * @throws UnknownHostError when any name is unknown (then no host is changed)
   */
  heal(hosts?: ReadonlyArray<string>): void {
    const names =
      hosts ?? [...this.model.hosts.values()].filter((host) => host.partitioned).map((host) => host.name);
    this.model.setPartitioned(names, false);
  }

  /** `On` or `Off`, as the host's BMC reports it. */
  powerState(host: string): 'On' | 'Off' {
    return this.model.host(host).poweredOn ? 'On' : 'Off';
  }

  /** Delays every API answer (optionally only under a path prefix such as `/compute/v2.1/servers`). */
  setApiDelay(milliseconds: number, pathPrefix: string | null = null): void {
    this.faults.apiDelayMilliseconds = milliseconds;
    this.faults.apiDelayPathPrefix = pathPrefix;
  }

  /** Replaces the next matching API answer(s) with this one (e.g. a 500 HTML page). */
  injectResponse(response: Omit<InjectedResponse, 'count'> & { count?: number }): void {
    this.faults.inject(response);
  }

  /** Makes evacuations of these servers fail (`error`: no valid host; `failed`: rebuild failed). */
  failEvacuations(
    serverIds: ReadonlyArray<string>,
    mode: EvacuationFailureMode = 'failed',
    times?: number,
  ): void {
    this.model.evacuation.injectFailures(serverIds, mode, times);
  }

  /** Sets the evacuation accept latency and rebuild time (milliseconds). */
  setEvacuationTiming(timing: { acceptMilliseconds?: number; rebuildMilliseconds?: number }): void {
    Object.assign(this.model.settings.evacuation, timing);
  }

  /** Changes a host's BMC quirks. */
  setBmcQuirks(
    host: string,
    quirks: Partial<Pick<SimBmc, 'alreadyOffStatus' | 'rejectOnAfterForceOff' | 'unreachable'>>,
  ): void {
    Object.assign(this.model.host(host).bmc, quirks);
  }

  /** How a host's BMC is reached. */
  bmc(host: string): BmcAccess {
    const record = this.model.host(host);
    const redfish = this.urls.redfish;
    if (!redfish) throw new Error('cloud-sim was started without Redfish BMCs');
    return {
      address: this.listenHost,
      port: Number(new URL(redfish).port),
      username: record.bmc.username,
      password: record.bmc.password,
      systemsUri: `/redfish/v1/Systems/${record.bmc.systemId}`,
    };
  }

  // ------------------------------------------------------------------ observation

  /** Evacuate calls accepted for a server (or for every server). */
  evacuateCalls(serverId: string): number;
  evacuateCalls(): Record<string, number>;
  evacuateCalls(serverId?: string): number | Record<string, number> {
    if (serverId !== undefined) return this.model.evacuation.calls.get(serverId) ?? 0;
    return Object.fromEntries(this.model.evacuation.calls);
  }

  /**
   * How many times a host's BMC switched it off and on (a `ComputerSystem.Reset` that found the host
   * already in that state is not counted: nothing was switched).
   */
  powerActions(host: string): { off: number; on: number } {
    this.model.host(host);
    return { ...(this.model.powerActions.get(host) ?? { off: 0, on: 0 }) };
  }

  /** Events received on `POST /os-server-external-events`, oldest first. */
  externalEvents() {
    return [...this.model.externalEvents];
  }

  addServer(options: AddServerOptions): SimServer {
    return this.model.addServer(options);
  }

  /** Hosts with their liveness, for the control API and the demo. */
  hostStates(): HostState[] {
    return [...this.model.hosts.values()].map((host) => ({
      host: host.name,
      state: this.model.serviceIsUp(host) ? 'up' : 'down',
      status: host.disabled ? 'disabled' : 'enabled',
      disabledReason: host.disabledReason,
      forcedDown: host.forcedDown,
      computeRunning: host.computeRunning,
      powerState: host.poweredOn ? 'On' : 'Off',
      partitioned: host.partitioned,
      servers: this.model.servers.countOnHost(host.name),
    }));
  }

  async close(): Promise<void> {
    this.model.close();
    await this.api?.close();
    await this.redfish?.close();
  }

  /**
   * For a cloud-sim process: on the first SIGTERM or SIGINT, logs `cloud-sim stopping`, closes the
   * servers and exits with status 0.
   */
  closeOnSignals(logger: { info(details: object, message: string): void }): void {
    const stop = async (signal: string) => {
      logger.info({ signal }, 'cloud-sim stopping');
      await this.close();
      process.exit(0);
    };
    process.once('SIGTERM', () => void stop('SIGTERM'));
    process.once('SIGINT', () => void stop('SIGINT'));
  }
}

/** Starts a simulated cloud (see CloudSimOptions) and resolves once it listens. */
export async function startCloudSim(options: CloudSimOptions = {}): Promise<CloudSim> {
  return new CloudSim(options).listen();
}
