import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { CloudModel } from '../model/cloud-model.ts';
import { novaTimestamp } from '../model/time-format.ts';
import { MAX_MICROVERSION, MIN_MICROVERSION } from './microversion.ts';
import { computeBase, NovaFault, nextLinks, pagination } from './nova-plumbing.ts';
import { aggregateView, flavorView } from './nova-views.ts';
import type { SimContext } from './sim-context.ts';

type Query = Record<string, string | undefined>;
const EVENT_NAMES = [
  'network-changed',
  'network-vif-plugged',
  'network-vif-unplugged',
  'network-vif-deleted',
  'volume-extended',
  'power-update',
  'accelerator-request-bound',
  'volume-reimaged',
];
/** Events Nova drops (code 400) without a tag (server_external_events.py). */
const TAG_REQUIRED = ['volume-extended', 'power-update', 'volume-reimaged'];

/** The version document of the simulated Nova (`GET /compute/v2.1`), as Zed answers it. */
export function versionEntry(base: string) {
  return {
    id: 'v2.1',
    status: 'CURRENT',
    version: MAX_MICROVERSION,
    min_version: MIN_MICROVERSION,
    updated: '2013-07-23T11:33:21Z',
    links: [
      { rel: 'self', href: `${base}/v2.1/` },
      { rel: 'describedby', type: 'text/html', href: 'http://docs.openstack.org/' },
    ],
    'media-types': [{ base: 'application/json', type: 'application/vnd.openstack.compute+json;version=2.1' }],
  };
}

/** `os-aggregates`, `flavors` (+ `os-extra_specs`) and `os-server-external-events`. */
export function registerNovaCatalogRoutes(app: FastifyInstance, context: SimContext): void {
  app.get('/', async (request) => ({ version: versionEntry(computeBase(request).replace(/\/v2\.1$/, '')) }));
  registerAggregateRoutes(app, context.model);
  registerFlavorRoutes(app, context.model);
  registerExternalEventRoutes(app, context.model);
}

/** `os-aggregates`: list, show, create, delete and the `add_host`/`remove_host`/`set_metadata` actions. */
function registerAggregateRoutes(app: FastifyInstance, model: CloudModel): void {
  const aggregateOf = (id: string) => {
    const aggregate = model.aggregates.get(Number(id));
    if (!aggregate) throw new NovaFault(404, `Aggregate ${id} could not be found.`);
    return aggregate;
  };
  app.get('/os-aggregates', async (request) => ({
    aggregates: [...model.aggregates.values()].map((aggregate) =>
      aggregateView(aggregate, request.microversion),
    ),
  }));
  app.get('/os-aggregates/:id', async (request) => ({
    aggregate: aggregateView(aggregateOf((request.params as { id: string }).id), request.microversion),
  }));
  app.post('/os-aggregates', async (request) => {
    const spec = ((request.body ?? {}) as { aggregate?: { name?: unknown; availability_zone?: unknown } })
      .aggregate;
    if (!spec || typeof spec.name !== 'string' || spec.name.length < 1 || spec.name.length > 255) {
      throw new NovaFault(400, "Invalid input for field/attribute aggregate. 'name' is a required property");
    }
    if ([...model.aggregates.values()].some((aggregate) => aggregate.name === spec.name)) {
      throw new NovaFault(409, `Aggregate ${spec.name} already exists.`);
    }
    const zone = typeof spec.availability_zone === 'string' ? spec.availability_zone : null;
    return { aggregate: aggregateView(model.addAggregate(spec.name, zone), request.microversion, false) };
  });
  app.delete('/os-aggregates/:id', async (request, reply) => {
    const aggregate = aggregateOf((request.params as { id: string }).id);
    if (aggregate.hosts.length > 0)
      throw new NovaFault(400, `Cannot remove aggregate ${aggregate.id}: it has hosts`);
    model.aggregates.delete(aggregate.id);
    return reply.code(200).send();
  });
  app.post('/os-aggregates/:id/action', async (request) => {
    const aggregate = aggregateOf((request.params as { id: string }).id);
    const body = (request.body ?? {}) as Record<
      string,
      { host?: string; metadata?: Record<string, string | null> }
    >;
    const [action] = Object.keys(body);
    const argument = action ? body[action] : undefined;
    if (action === 'add_host' || action === 'remove_host') {
      const host = argument?.host;
      if (!host || !model.hosts.has(host))
        throw new NovaFault(404, `Compute host ${host} could not be found.`);
      const present = aggregate.hosts.includes(host);
      if (action === 'add_host') {
        if (present) throw new NovaFault(409, `Aggregate ${aggregate.id} already has host ${host}.`);
        aggregate.hosts.push(host);
      } else {
        if (!present) throw new NovaFault(404, `Cannot remove host ${host} in aggregate ${aggregate.id}`);
        aggregate.hosts.splice(aggregate.hosts.indexOf(host), 1);
      }
    } else if (action === 'set_metadata') {
      for (const [key, value] of Object.entries(argument?.metadata ?? {})) {
        if (value === null) delete aggregate.metadata[key];
        else aggregate.metadata[key] = String(value);
        if (key === 'availability_zone') aggregate.availabilityZone = value === null ? null : String(value);
      }
    } else {
      throw new NovaFault(
        400,
        `Invalid input for field/attribute body. Additional properties are not allowed ('${action}' was unexpected)`,
      );
    }
    aggregate.updatedAt = model.now();
    return { aggregate: aggregateView(aggregate, request.microversion) };
  });
}

/**
 * `GET /flavors` (`detail` false: id, name, links and description) and `GET /flavors/detail`: the public,
 * private or all (`is_public=none`) flavors sorted by id, paged by `limit`/`marker` with `flavors_links`.
 */
function listFlavors(model: CloudModel, detail: boolean) {
  return async (request: FastifyRequest) => {
    const query = request.query as Query;
    const { limit, marker } = pagination(query);
    const isPublic = (query.is_public ?? 'true').toLowerCase();
    let list = [...model.flavors.values()]
      .filter(
        (flavor) =>
          isPublic === 'none' || flavor.isPublic === ['1', 't', 'true', 'yes', 'y', 'on'].includes(isPublic),
      )
      .sort((left, right) => (left.id < right.id ? -1 : left.id > right.id ? 1 : 0));
    if (marker !== undefined) {
      const index = list.findIndex((flavor) => flavor.id === marker);
      if (index < 0) throw new NovaFault(400, `marker [${marker}] not found`);
      list = list.slice(index + 1);
    }
    const page = list.slice(0, limit);
    const base = computeBase(request);
    const body: Record<string, unknown> = {
      flavors: page.map((flavor) => {
        const view = flavorView(flavor, request.microversion, base);
        return detail
          ? view
          : {
              id: view.id,
              name: view.name,
              links: view.links,
              ...('description' in view ? { description: view.description } : {}),
            };
      }),
    };
    const links = nextLinks(
      base,
      detail ? '/flavors/detail' : '/flavors',
      query,
      page.length === limit,
      page.at(-1)?.id,
    );
    if (links) body.flavors_links = links;
    return body;
  };
}

/** `flavors`: list, show, create, delete, and their `os-extra_specs`. */
function registerFlavorRoutes(app: FastifyInstance, model: CloudModel): void {
  const flavorOf = (id: string) => {
    const flavor = model.flavors.get(id);
    if (!flavor) throw new NovaFault(404, `Flavor ${id} could not be found.`);
    return flavor;
  };
  app.get('/flavors', listFlavors(model, false));
  app.get('/flavors/detail', listFlavors(model, true));
  app.get('/flavors/:id', async (request) => ({
    flavor: flavorView(
      flavorOf((request.params as { id: string }).id),
      request.microversion,
      computeBase(request),
    ),
  }));
  app.post('/flavors', async (request) => {
    const spec = ((request.body ?? {}) as { flavor?: Record<string, unknown> }).flavor;
    if (!spec || typeof spec.name !== 'string')
      throw new NovaFault(400, "Invalid input for field/attribute flavor. 'name' is a required property");
    const id = spec.id === undefined || spec.id === null ? crypto.randomUUID() : String(spec.id);
    if (model.flavors.has(id)) throw new NovaFault(409, `Flavor with ID ${id} already exists.`);
    if ([...model.flavors.values()].some((flavor) => flavor.name === spec.name))
      throw new NovaFault(409, `Flavor with name ${spec.name} already exists.`);
    const flavor = model.addFlavor({
      id,
      name: spec.name,
      ram: Number(spec.ram ?? 0),
      vcpus: Number(spec.vcpus ?? 1),
      disk: Number(spec.disk ?? 0),
      isPublic: spec['os-flavor-access:is_public'] !== false,
    });
    return { flavor: flavorView(flavor, request.microversion, computeBase(request)) };
  });
  app.delete('/flavors/:id', async (request, reply) => {
    const flavor = flavorOf((request.params as { id: string }).id);
    model.flavors.delete(flavor.id);
    return reply.code(202).send();
  });
  app.get('/flavors/:id/os-extra_specs', async (request) => ({
    extra_specs: { ...flavorOf((request.params as { id: string }).id).extraSpecs },
  }));
  app.post('/flavors/:id/os-extra_specs', async (request) => {
    const flavor = flavorOf((request.params as { id: string }).id);
    const specs = ((request.body ?? {}) as { extra_specs?: Record<string, unknown> }).extra_specs;
    if (!specs || typeof specs !== 'object')
      throw new NovaFault(
        400,
        "Invalid input for field/attribute extra_specs. 'extra_specs' is a required property",
      );
    for (const [key, value] of Object.entries(specs)) flavor.extraSpecs[key] = String(value);
    return { extra_specs: { ...specs } };
  });
  app.delete('/flavors/:id/os-extra_specs/:key', async (request, reply) => {
    const { id, key } = request.params as { id: string; key: string };
    const flavor = flavorOf(id);
    if (!Object.hasOwn(flavor.extraSpecs, key))
      throw new NovaFault(404, `Flavor ${id} has no extra specs with key ${key}.`);
    delete flavor.extraSpecs[key];
    return reply.code(200).send();
  });
}

/** `os-server-external-events`: each event answered and recorded in `model.externalEvents`. */
function registerExternalEventRoutes(app: FastifyInstance, model: CloudModel): void {
  app.post('/os-server-external-events', async (request, reply) => {
    const events = ((request.body ?? {}) as { events?: unknown }).events;
    if (!Array.isArray(events) || events.length === 0) {
      throw new NovaFault(400, 'Invalid input for field/attribute events. Value: []. [] is too short');
    }
    for (const event of events as Array<Record<string, unknown>>) {
      if (!EVENT_NAMES.includes(String(event.name)) || typeof event.server_uuid !== 'string') {
        throw new NovaFault(
          400,
          `Invalid input for field/attribute name. Value: ${String(event.name)}. '${String(event.name)}' is not one of ${JSON.stringify(EVENT_NAMES)}`,
        );
      }
    }
    let status = 200;
    const answered = (events as Array<Record<string, unknown>>).map((event) => {
      const server = model.servers.get(event.server_uuid as string);
      const result: Record<string, unknown> = { ...event };
      if (!server) Object.assign(result, { status: 'failed', code: 404 });
      else if (TAG_REQUIRED.includes(String(event.name)) && !event.tag)
        Object.assign(result, { status: 'failed', code: 400 });
      else if (server.host) Object.assign(result, { status: 'completed', code: 200 });
      else Object.assign(result, { status: 'failed', code: 422 });
      if (result.code !== 200) status = 207;
      model.externalEvents.push({
        name: String(event.name),
        server_uuid: String(event.server_uuid),
        status: String(event.status ?? 'completed'),
        tag: typeof event.tag === 'string' ? event.tag : null,
        code: result.code as number,
        receivedAt: novaTimestamp(model.now(), true),
      });
      return result;
    });
    return reply.code(status).send({ events: answered });
  });
}
