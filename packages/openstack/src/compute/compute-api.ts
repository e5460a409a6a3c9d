import type {
  Aggregate,
  ComputeService,
  ComputeServiceUpdate,
  Flavor,
  Hypervisor,
  Migration,
  Server,
  ServerExternalEvent,
  ServerExternalEventResult,
} from './resources.ts';

/** What a Nova call returned besides its body: Nova's request id, for logs next to every evacuate. */
export interface NovaCallInfo {
  /** The `x-openstack-request-id` response header (`req-<uuid>`), or null. */
  requestId: string | null;
}

/** Filters of `GET /os-migrations` (2.59+). Times are ISO 8601 strings. */
export interface MigrationFilter {
  instanceUuid?: string;
  sourceCompute?: string;
  migrationType?: 'evacuation' | 'live-migration' | 'migration' | 'resize';
  changesSince?: string;
  /** Page size; the client follows `migrations_links` until `maxRecords` are read (default 1000). */
  limit?: number;
  maxRecords?: number;
}

/**
 * The Compute API calls lifeguard's workers make (docs/instance-ha-rules.md#nova-marking and docs/nova-facts.md).
 * Every method validates Nova's answer with zod, follows pagination where Nova paginates, and throws
 * NovaApiError (HTTP status, Nova's message, `x-openstack-request-id`) for non-2xx answers.
 * Implementations negotiate a microversion in [2.53, 2.94] (2.73 when available: lock reasons).
 */
export interface ComputeApi {
  /**
   * `GET /os-services?binary=&host=`. Partial records from down cells (2.69) are returned as they are
   * when they fit the ComputeService schema; a record that does not (no `id`, no `host`, ...) is
   * logged and left out, so one bad record never hides the other services.
   */
  listServices(filter?: { binary?: string; host?: string }): Promise<ComputeService[]>;
  /** `PUT /os-services/{id}` with any of `status`, `disabled_reason`, `forced_down` (2.53+). */
  updateService(serviceId: string, body: ComputeServiceUpdate): Promise<ComputeService>;
  /** `GET /os-hypervisors/detail` (all pages). */
  listHypervisors(): Promise<Hypervisor[]>;
  /**
   * `GET /servers/detail?host=&all_tenants=1` following `servers_links` (all pages). `limit` is the
   * page size (default the client's, 1000).
   */
  listServers(filter?: {
    host?: string;
    allTenants?: boolean;
    status?: string;
    limit?: number;
  }): Promise<Server[]>;
  /** `GET /servers/{id}`. */
  getServer(serverId: string): Promise<Server>;
  /** `POST /servers/{id}/action {"evacuate": {}}` (or `{"host": target}`); 200 = accepted. */
  evacuate(serverId: string, options?: { host?: string }): Promise<NovaCallInfo>;
  /** `POST /servers/{id}/action {"lock": {"locked_reason": reason}}` (2.73+; plain lock before). */
  lockServer(serverId: string, reason: string): Promise<NovaCallInfo>;
  /** `POST /servers/{id}/action {"unlock": null}`. */
  unlockServer(serverId: string): Promise<NovaCallInfo>;
  /** `POST /servers/{id}/action {"os-resetState": {"state": state}}`. */
  resetServerState(serverId: string, state: 'error' | 'active'): Promise<NovaCallInfo>;
  /** `POST /servers/{id}/action {"os-stop": null}`. */
  stopServer(serverId: string): Promise<NovaCallInfo>;
  /** `POST /servers/{id}/action {"os-start": null}` (a SHUTOFF server; 409 in any other state). */
  startServer(serverId: string): Promise<NovaCallInfo>;
  /** `GET /os-migrations` with filters, newest first (all pages up to `maxRecords`). */
  listMigrations(filter: MigrationFilter): Promise<Migration[]>;
  /** `GET /os-aggregates`. */
  listAggregates(): Promise<Aggregate[]>;
  /** `GET /flavors/detail?is_public=None` (all flavors, private included, all pages). */
  listFlavors(): Promise<Flavor[]>;
  /** `GET /flavors/{id}/os-extra_specs`. */
  getFlavorExtraSpecs(flavorId: string): Promise<Record<string, string>>;
  /**
   * `POST /os-server-external-events`. Resolves for 200 and 207: each event comes back with its own
   * `code` (200 accepted; 404 unknown server, 422 server without a host, 400 tag missing for an
   * event that needs one — Nova Zed answers 207 even when no event was accepted); throws NovaApiError
   * for error statuses (400 invalid body, 403, 404 from older Novas that refused when none was accepted).
   */
  createServerExternalEvents(
    events: ReadonlyArray<ServerExternalEvent>,
  ): Promise<{ status: number; events: ServerExternalEventResult[] }>;
}
