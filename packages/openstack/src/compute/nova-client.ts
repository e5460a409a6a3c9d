import type { Logger } from '@lifeguard/runtime';
import { z } from 'zod';
import type { AuthProvider } from '../auth/auth-provider.ts';
import { MicroversionNotSupportedError } from '../errors.ts';
import {
  type HttpMethod,
  type OpenStackTransport,
  type ServiceTransportOptions,
  serviceTransport,
  type TransportResponse,
} from '../http/openstack-transport.ts';
import { nextLinkParameters, parseBody } from '../http/parse-body.ts';
import type { ComputeApi, MigrationFilter, NovaCallInfo } from './compute-api.ts';
import {
  chooseMicroversion,
  compareMicroversions,
  microversionRange,
  VersionDocument,
  versionDocumentUrl,
} from './microversion.ts';
import {
  Aggregate,
  ComputeService,
  ComputeServiceUpdate,
  Flavor,
  Hypervisor,
  isComputeServiceRecord,
  Migration,
  Server,
  type ServerExternalEvent,
  ServerExternalEventResult,
} from './resources.ts';

/** NovaClient's options: the transport's (auth, timeout in milliseconds, retry policy, logger) and its own. */
export interface NovaClientOptions extends ServiceTransportOptions {
  /** Use this microversion instead of negotiating one (must be 2.53 or later). */
  microversion?: string;
  /** Page size of list calls (`limit`); Nova caps it at `[api] max_limit`, 1000 by default. */
  pageSize?: number;
}

const Links = z.array(z.looseObject({ rel: z.string().optional(), href: z.string().optional() })).optional();
const ServicesBody = z.object({ services: z.array(z.unknown()) });
// A listing as Nova sends it at 2.53+ (every `id` a UUID string): ComputeService's output without
// converting each `id`, the costliest step of validating 10,000 records.
const ServiceListingBody = z.object({ services: z.array(ComputeService.extend({ id: z.string() })) });
const ServiceBody = z.object({ service: ComputeService });
const HypervisorsBody = z.object({ hypervisors: z.array(Hypervisor), hypervisors_links: Links });
const ServersBody = z.object({ servers: z.array(Server), servers_links: Links });
const ServerBody = z.object({ server: Server });
const MigrationsBody = z.object({ migrations: z.array(Migration), migrations_links: Links });
const AggregatesBody = z.object({ aggregates: z.array(Aggregate) });
const FlavorsBody = z.object({ flavors: z.array(Flavor), flavors_links: Links });
const ExtraSpecsBody = z.object({ extra_specs: z.record(z.string(), z.string()) });
const EventsBody = z.object({ events: z.array(ServerExternalEventResult) });

type Query = Record<string, string | number | undefined>;

/**
 * The Compute API client (Nova) lifeguard's workers use; implements ComputeApi.
 *
 * - Microversion: negotiated once from the version document (`GET <compute endpoint>`, see
 *   chooseMicroversion: 2.73, or the newest ≥ 2.53), sent as `OpenStack-API-Version: compute <v>` and
 *   `X-OpenStack-Nova-API-Version: <v>` on every call.
 * - Every answer is validated with zod (UnexpectedResponseError when it does not fit).
 * - Lists follow `*_links` `rel: next` pages (the marker is re-sent to the configured endpoint).
 * - Errors: NovaApiError (status, Nova's message, `x-openstack-request-id`), EndpointUnreachableError,
 *   KeystoneAuthError, MicroversionNotSupportedError. Retries: see RetryPolicy (evacuate and other
 *   POST actions are only re-sent when they cannot have reached Nova).
 */
export class NovaClient implements ComputeApi {
  private readonly transport: OpenStackTransport;
  private readonly auth: AuthProvider;
  private readonly pageSize: number;
  private readonly logger: Logger | null;
  private negotiated: Promise<string> | null;

  constructor(options: NovaClientOptions) {
    this.auth = options.auth;
    this.logger = options.logger ?? null;
    this.pageSize = options.pageSize ?? 1000;
    this.transport = serviceTransport('compute', options);
    this.negotiated = options.microversion ? Promise.resolve(options.microversion) : null;
  }

  /**
   * The microversion in use, negotiated on first call from the version document.
   * @throws MicroversionNotSupportedError | NovaApiError | EndpointUnreachableError
   */
  microversion(): Promise<string> {
    if (!this.negotiated) {
      this.negotiated = this.negotiate().catch((error: unknown) => {
        this.negotiated = null;
        throw error;
      });
    }
    return this.negotiated;
  }

  private async negotiate(): Promise<string> {
    const endpoint = await this.auth.endpoint('compute');
    const url = versionDocumentUrl(endpoint);
    const response = await this.transport.request({
      method: 'GET',
      url,
      operation: 'GET / (version document)',
    });
    const document = parseBody(VersionDocument, response, 'compute', 'GET / (version document)');
    const range = microversionRange(document);
    if (!range) throw new MicroversionNotSupportedError(url, 'none', 'none');
    return chooseMicroversion(url, range.minimum, range.maximum);
  }

  private async call(
    method: HttpMethod,
    path: string,
    operation: string,
    options: { query?: Query; body?: unknown } = {},
  ): Promise<TransportResponse> {
    const microversion = await this.microversion();
    const endpoint = await this.auth.endpoint('compute');
    const url = new URL(`${endpoint.replace(/\/+$/, '')}${path}`);
    for (const [key, value] of Object.entries(options.query ?? {})) {
      if (value !== undefined) url.searchParams.set(key, String(value));
    }
    return this.transport.request({
      method,
      url: url.toString(),
      operation: `${method} ${operation}`,
      headers: {
        'openstack-api-version': `compute ${microversion}`,
        'x-openstack-nova-api-version': microversion,
      },
      ...(options.body === undefined ? {} : { body: options.body }),
    });
  }

  /** Reads every page of a list, up to `maxRecords` items. */
  private async paginate<Item>(
    path: string,
    operation: string,
    query: Query,
    read: (response: TransportResponse) => {
      items: Item[];
      links: Array<{ rel?: string; href?: string }> | undefined;
    },
    maxRecords = Number.POSITIVE_INFINITY,
  ): Promise<Item[]> {
    const items: Item[] = [];
    const seenMarkers = new Set<string>();
    let marker: string | undefined;
    for (;;) {
      const response = await this.call('GET', path, operation, { query: { ...query, marker } });
      const page = read(response);
      items.push(...page.items);
      if (items.length >= maxRecords) return items.slice(0, maxRecords);
      const next = nextLinkParameters(page.links)?.get('marker') ?? undefined;
      if (!next || page.items.length === 0 || seenMarkers.has(next)) return items;
      seenMarkers.add(next);
      marker = next;
    }
  }

  async listServices(filter: { binary?: string; host?: string } = {}): Promise<ComputeService[]> {
    const response = await this.call('GET', '/os-services', '/os-services', {
      query: { binary: filter.binary, host: filter.host },
    });
    // A listing whose every record fits ComputeService as it is (every `id` text, as at 2.53+) is
    // taken without a copy (isComputeServiceRecord: the schema's checks, at 10,000 services a third
    // of the poll's CPU when zod copies each record). Else the whole listing is validated in one zod
    // pass, and only a listing that does not fit (a record without `id`, a number `id`) is validated
    // record by record, to convert or leave out those records (docs/node-monitor.md#the-cost-of-a-poll).
    const records = (response.body as { services?: unknown } | null)?.services;
    if (Array.isArray(records) && records.every(isComputeServiceRecord)) return records;
    const listing = ServiceListingBody.safeParse(response.body);
    if (listing.success) return listing.data.services;
    return this.servicesThatFit(parseBody(ServicesBody, response, 'compute', 'GET /os-services').services);
  }

  /**
   * The records of an `os-services` listing that fit ComputeService. One record that does not fit
   * (e.g. a 2.69 record of a down cell without `id`) must not hide every other service: it is
   * logged and left out.
   */
  private servicesThatFit(records: ReadonlyArray<unknown>): ComputeService[] {
    const services: ComputeService[] = [];
    for (const record of records) {
      const parsed = ComputeService.safeParse(record);
      if (parsed.success) {
        services.push(parsed.data);
        continue;
      }
      const host = (record as { host?: unknown } | null)?.host;
      this.logger?.warn(
        {
          host: typeof host === 'string' ? host : null,
          problems: parsed.error.issues.map(
            (issue) => `${issue.path.join('.') || '(record)'}: ${issue.message}`,
          ),
        },
        'GET /os-services: a service record that does not fit the schema was left out',
      );
    }
    return services;
  }

  async updateService(serviceId: string, body: ComputeServiceUpdate): Promise<ComputeService> {
    const valid = ComputeServiceUpdate.parse(body);
    const response = await this.call(
      'PUT',
      `/os-services/${encodeURIComponent(serviceId)}`,
      '/os-services/{service_id}',
      { body: valid },
    );
    return parseBody(ServiceBody, response, 'compute', 'PUT /os-services/{service_id}').service;
  }

  async listHypervisors(): Promise<Hypervisor[]> {
    return this.paginate(
      '/os-hypervisors/detail',
      '/os-hypervisors/detail',
      { limit: this.pageSize },
      (response) => {
        const body = parseBody(HypervisorsBody, response, 'compute', 'GET /os-hypervisors/detail');
        return { items: body.hypervisors, links: body.hypervisors_links };
      },
    );
  }

  async listServers(
    filter: { host?: string; allTenants?: boolean; status?: string; limit?: number } = {},
  ): Promise<Server[]> {
    const query: Query = {
      host: filter.host,
      status: filter.status,
      all_tenants: filter.allTenants === false ? undefined : 1,
      limit: filter.limit ?? this.pageSize,
    };
    return this.paginate('/servers/detail', '/servers/detail', query, (response) => {
      const body = parseBody(ServersBody, response, 'compute', 'GET /servers/detail');
      return { items: body.servers, links: body.servers_links };
    });
  }

  async getServer(serverId: string): Promise<Server> {
    const response = await this.call(
      'GET',
      `/servers/${encodeURIComponent(serverId)}`,
      '/servers/{server_id}',
    );
    return parseBody(ServerBody, response, 'compute', 'GET /servers/{server_id}').server;
  }

  private async action(serverId: string, body: unknown, name: string): Promise<NovaCallInfo> {
    const response = await this.call(
      'POST',
      `/servers/${encodeURIComponent(serverId)}/action`,
      `/servers/{server_id}/action (${name})`,
      { body },
    );
    return { requestId: response.requestId };
  }

  async evacuate(serverId: string, options: { host?: string } = {}): Promise<NovaCallInfo> {
    return this.action(serverId, { evacuate: options.host ? { host: options.host } : {} }, 'evacuate');
  }

  async lockServer(serverId: string, reason: string): Promise<NovaCallInfo> {
    const withReason = compareMicroversions(await this.microversion(), '2.73') >= 0;
    return this.action(serverId, { lock: withReason ? { locked_reason: reason } : null }, 'lock');
  }

  async unlockServer(serverId: string): Promise<NovaCallInfo> {
    return this.action(serverId, { unlock: null }, 'unlock');
  }

  async resetServerState(serverId: string, state: 'error' | 'active'): Promise<NovaCallInfo> {
    return this.action(serverId, { 'os-resetState': { state } }, 'os-resetState');
  }

  async stopServer(serverId: string): Promise<NovaCallInfo> {
    return this.action(serverId, { 'os-stop': null }, 'os-stop');
  }

  async startServer(serverId: string): Promise<NovaCallInfo> {
    return this.action(serverId, { 'os-start': null }, 'os-start');
  }

  async listMigrations(filter: MigrationFilter): Promise<Migration[]> {
    const query: Query = {
      instance_uuid: filter.instanceUuid,
      source_compute: filter.sourceCompute,
      migration_type: filter.migrationType,
      'changes-since': filter.changesSince,
      limit: filter.limit ?? this.pageSize,
    };
    return this.paginate(
      '/os-migrations',
      '/os-migrations',
      query,
      (response) => {
        const body = parseBody(MigrationsBody, response, 'compute', 'GET /os-migrations');
        return { items: body.migrations, links: body.migrations_links };
      },
      filter.maxRecords ?? 1000,
    );
  }

  async listAggregates(): Promise<Aggregate[]> {
    const response = await this.call('GET', '/os-aggregates', '/os-aggregates');
    return parseBody(AggregatesBody, response, 'compute', 'GET /os-aggregates').aggregates;
  }

  async listFlavors(): Promise<Flavor[]> {
    return this.paginate(
      '/flavors/detail',
      '/flavors/detail',
      { is_public: 'None', limit: this.pageSize },
      (response) => {
        const body = parseBody(FlavorsBody, response, 'compute', 'GET /flavors/detail');
        return { items: body.flavors, links: body.flavors_links };
      },
    );
  }

  async getFlavorExtraSpecs(flavorId: string): Promise<Record<string, string>> {
    const response = await this.call(
      'GET',
      `/flavors/${encodeURIComponent(flavorId)}/os-extra_specs`,
      '/flavors/{flavor_id}/os-extra_specs',
    );
    return parseBody(ExtraSpecsBody, response, 'compute', 'GET /flavors/{flavor_id}/os-extra_specs')
      .extra_specs;
  }

  async createServerExternalEvents(
    events: ReadonlyArray<ServerExternalEvent>,
  ): Promise<{ status: number; events: ServerExternalEventResult[] }> {
    const response = await this.call('POST', '/os-server-external-events', '/os-server-external-events', {
      body: { events },
    });
    return {
      status: response.status,
      events: parseBody(EventsBody, response, 'compute', 'POST /os-server-external-events').events,
    };
  }
}
