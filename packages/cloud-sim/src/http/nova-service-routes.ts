import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { CloudModel } from '../model/cloud-model.ts';
import type { SimHost } from '../model/records.ts';
import { parseClientTimestamp } from '../model/time-format.ts';
import { atLeast } from './microversion.ts';
import { computeBase, NovaFault, nextLinks, pagination, UUID_PATTERN } from './nova-plumbing.ts';
import { computeServiceView, controlServiceView, hypervisorView, migrationView } from './nova-views.ts';
import type { SimContext } from './sim-context.ts';

type Query = Record<string, string | undefined>;

/** `os-services`, `os-hypervisors` and `os-migrations` of the simulated Nova. */
export function registerNovaServiceRoutes(app: FastifyInstance, context: SimContext): void {
  const { model } = context;

  app.get('/os-services', listServices(model));

  app.put('/os-services/:id', updateService(context));

  registerHypervisorRoutes(app, model);
  app.get('/os-migrations', listMigrations(model));
}

/** `os-hypervisors`: list and detail (paged, `hypervisor_hostname_pattern`, `with_servers`) and show. */
function registerHypervisorRoutes(app: FastifyInstance, model: CloudModel): void {
  const hypervisors = (detail: boolean) => async (request: FastifyRequest) => {
    const query = request.query as Query;
    const mv = request.microversion;
    const { limit, marker } = pagination(query);
    let hosts = [...model.hosts.values()];
    if (query.hypervisor_hostname_pattern) {
      const pattern = query.hypervisor_hostname_pattern;
      hosts = hosts.filter((host) => host.name.includes(pattern));
      if (hosts.length === 0) throw new NovaFault(404, `No hypervisor matching '${pattern}' could be found.`);
    }
    if (marker !== undefined) {
      const index = hosts.findIndex((host) => host.hypervisorId === marker);
      if (index < 0) throw new NovaFault(400, `marker [${marker}] not found`);
      hosts = hosts.slice(index + 1);
    }
    const page = hosts.slice(0, limit);
    const withServers = ['1', 'true', 'True', 'yes'].includes(query.with_servers ?? '');
    const body: Record<string, unknown> = {
      hypervisors: page.map((host) => hypervisorView(model, host, mv, detail, withServers)),
    };
    const links = nextLinks(
      computeBase(request),
      detail ? '/os-hypervisors/detail' : '/os-hypervisors',
      query,
      page.length === limit && query.limit !== undefined,
      page.at(-1)?.hypervisorId,
    );
    if (links) body.hypervisors_links = links;
    return body;
  };
  app.get('/os-hypervisors', hypervisors(false));
  app.get('/os-hypervisors/detail', hypervisors(true));
  app.get('/os-hypervisors/:id', async (request) => {
    const { id } = request.params as { id: string };
    const host = [...model.hosts.values()].find((each) => each.hypervisorId === id);
    if (!host) throw new NovaFault(404, `Hypervisor with ID ${id} could not be found.`);
    return { hypervisor: hypervisorView(model, host, request.microversion, true, false) };
  });
}

/** Nova refuses `forced_down: false` while `done` evacuations from the host remain (services.py). */
function checkNoDoneEvacuations(context: SimContext, host: SimHost): void {
  if (context.model.migrations.fromSource(host.name).some((migration) => migration.status === 'done')) {
    throw new NovaFault(
      400,
      `Unable to force up host ${host.name} as \`done\` evacuation migration records remain associated with the host. Ensure the compute service has been restarted, allowing these records to move to \`completed\` before retrying this request.`,
    );
  }
}

/** oslo's strict bool_from_string: true/false, and the strings Nova accepts for booleans. */
function booleanFromString(value: unknown): boolean | undefined {
  if (typeof value === 'boolean') return value;
  if (typeof value !== 'string') return undefined;
  const lowered = value.toLowerCase();
  if (['1', 't', 'true', 'on', 'y', 'yes'].includes(lowered)) return true;
  if (['0', 'f', 'false', 'off', 'n', 'no'].includes(lowered)) return false;
  return undefined;
}

function timestamp(text: string, name: string): number {
  const value = parseClientTimestamp(text);
  if (value === null)
    throw new NovaFault(
      400,
      `Invalid input for query parameters ${name}. Value: ${text}. '${text}' is not a 'date-time'`,
    );
  return value;
}

function optional<Shape extends Record<string, unknown>>(values: Shape): Partial<Shape> {
  return Object.fromEntries(
    Object.entries(values).filter(([, value]) => value !== undefined),
  ) as Partial<Shape>;
}

/** `GET /os-services`: the control services and one nova-compute service per host, filtered by `binary` and `host`. */
function listServices(model: CloudModel) {
  return async (request: FastifyRequest) => {
    const query = request.query as Query;
    const mv = request.microversion;
    const services: Array<Record<string, unknown>> = [];
    if (!query.binary || query.binary !== 'nova-compute') {
      for (const service of model.controlServices) {
        if (query.binary && query.binary !== service.binary) continue;
        if (query.host && query.host !== 'controller') continue;
        services.push(controlServiceView(model, service, mv));
      }
    }
    if (!query.binary || query.binary === 'nova-compute') {
      if (query.host !== undefined) {
        const host = model.hosts.get(query.host);
        if (host) services.push(computeServiceView(model, host, mv));
      } else {
        for (const host of model.hosts.values()) services.push(computeServiceView(model, host, mv));
      }
    }
    return { services };
  };
}

/**
 * `PUT /os-services/{service_id}` (microversion 2.53+): `status`, `disabled_reason` and `forced_down` of a
 * nova-compute service; `forced_down: false` is refused while `done` evacuations remain.
 */
function updateService(context: SimContext) {
  const { model } = context;
  return async (request: FastifyRequest) => {
    const { id } = request.params as { id: string };
    const mv = request.microversion;
    if (!atLeast(mv, '2.53')) throw new NovaFault(404, 'The resource could not be found.');
    if (!UUID_PATTERN.test(id)) throw new NovaFault(400, `Invalid uuid ${id}`);
    const body = (request.body ?? {}) as Record<string, unknown>;
    const forcedDown = validateServiceUpdate(body);
    const control = model.controlServices.find((service) => service.serviceId === id);
    if (control)
      throw new NovaFault(
        400,
        `Updating a ${control.binary} service is not supported. Only nova-compute services can be updated.`,
      );
    const host = [...model.hosts.values()].find((each) => each.serviceId === id);
    if (!host) throw new NovaFault(404, `Service ${id} could not be found.`);
    let changed = false;
    if (body.status === 'enabled') {
      if (body.disabled_reason)
        throw new NovaFault(400, "Specifying 'disabled_reason' with status 'enabled' is invalid.");
      host.disabled = false;
      host.disabledReason = null;
      changed = true;
    } else if (body.status === 'disabled') {
      host.disabled = true;
      host.disabledReason = (body.disabled_reason as string | undefined) ?? null;
      changed = true;
    }
    if (forcedDown !== undefined) {
      if (forcedDown === false) checkNoDoneEvacuations(context, host);
      host.forcedDown = forcedDown;
      changed = true;
    }
    if (!changed)
      throw new NovaFault(
        400,
        "No updates were requested. Fields 'status' or 'forced_down' should be specified.",
      );
    host.serviceUpdatedAt = model.now();
    return { service: computeServiceView(model, host, mv, true) };
  };
}

/** `GET /os-migrations`: filtered, paged from 2.59 (`changes-since`), `changes-before` from 2.66. */
function listMigrations(model: CloudModel) {
  return async (request: FastifyRequest) => {
    const query = request.query as Query;
    const mv = request.microversion;
    const paged = atLeast(mv, '2.59');
    const { limit, marker } = paged
      ? pagination(query)
      : { limit: Number.POSITIVE_INFINITY, marker: undefined };
    const since =
      paged && query['changes-since'] ? timestamp(query['changes-since'], 'changes-since') : undefined;
    const before =
      atLeast(mv, '2.66') && query['changes-before']
        ? timestamp(query['changes-before'], 'changes-before')
        : undefined;
    const result = model.migrations.query({
      ...optional({
        instanceUuid: query.instance_uuid,
        sourceCompute: query.source_compute,
        host: query.host,
        status: query.status,
        migrationType: query.migration_type,
        changesSince: since,
        changesBefore: before,
        marker,
      }),
      limit,
    });
    if (!result) throw new NovaFault(400, `Marker ${marker} could not be found.`);
    const body: Record<string, unknown> = {
      migrations: result.migrations.map((migration) => migrationView(migration, mv)),
    };
    if (paged) {
      const links = nextLinks(
        computeBase(request),
        '/os-migrations',
        query,
        result.full && query.limit !== undefined,
        result.migrations.at(-1)?.uuid,
      );
      if (links) body.migrations_links = links;
    }
    return body;
  };
}

/**
 * The schema of the `PUT /os-services/{service_id}` body (Nova's services.py): only `status`
 * (enabled|disabled), `disabled_reason` (1 to 255 characters) and `forced_down` (a boolean or oslo's
 * boolean strings). Returns `forced_down` as a boolean, undefined when absent; throws NovaFault 400.
 */
function validateServiceUpdate(body: Record<string, unknown>): boolean | undefined {
  if (typeof body !== 'object' || Array.isArray(body))
    throw new NovaFault(400, 'Invalid input for field/attribute body.');
  for (const key of Object.keys(body)) {
    if (!['status', 'disabled_reason', 'forced_down'].includes(key)) {
      throw new NovaFault(
        400,
        `Invalid input for field/attribute body. Value: ${JSON.stringify(body)}. Additional properties are not allowed ('${key}' was unexpected)`,
      );
    }
  }
  if ('status' in body && body.status !== 'enabled' && body.status !== 'disabled') {
    throw new NovaFault(
      400,
      `Invalid input for field/attribute status. Value: ${String(body.status)}. '${String(body.status)}' is not one of ['enabled', 'disabled']`,
    );
  }
  if ('disabled_reason' in body) {
    const reason = body.disabled_reason;
    if (typeof reason !== 'string' || reason.length < 1 || reason.length > 255) {
      throw new NovaFault(
        400,
        `Invalid input for field/attribute disabled_reason. Value: ${String(reason)}. must be a string of 1 to 255 characters`,
      );
    }
  }
  let forcedDown: boolean | undefined;
  if ('forced_down' in body) {
    forcedDown = booleanFromString(body.forced_down);
    if (forcedDown === undefined)
      throw new NovaFault(
        400,
        `Invalid input for field/attribute forced_down. Value: ${String(body.forced_down)}. ${JSON.stringify(body.forced_down)} is not of type 'boolean', 'string'`,
      );
  }
  return forcedDown;
}
