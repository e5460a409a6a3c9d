import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { CloudModel } from '../model/cloud-model.ts';
import type { SimServer } from '../model/records.ts';
import { parseClientTimestamp } from '../model/time-format.ts';
import { atLeast } from './microversion.ts';
import { computeBase, NovaFault, nextLinks, pagination } from './nova-plumbing.ts';
import { serverStatus, serverView } from './nova-views.ts';
import type { SimContext } from './sim-context.ts';

type Query = Record<string, string | undefined>;
const TRUE_WORDS = ['1', 't', 'true', 'on', 'y', 'yes'];
const sleep = (milliseconds: number) => new Promise((resolve) => setTimeout(resolve, milliseconds));

/** `servers` (list, detail, show, create, delete) and server actions of the simulated Nova. */
export function registerNovaServerRoutes(app: FastifyInstance, context: SimContext): void {
  const { model } = context;

  const lookup = (id: string): SimServer => lookupServer(model, id);
  app.get('/servers', listServers(model, false));
  app.get('/servers/detail', listServers(model, true));

  app.get('/servers/:id', async (request) => {
    const { id } = request.params as { id: string };
    return { server: serverView(model, lookup(id), request.microversion, computeBase(request)) };
  });

  app.post('/servers', createServer(model));

  app.delete('/servers/:id', async (request, reply) => {
    const { id } = request.params as { id: string };
    lookup(id);
    // Nova deletes the instance's migration records with it (an evacuation under way included: the
    // destination's rebuild then finds no instance and stops).
    model.servers.remove(id);
    model.migrations.removeOfInstance(id);
    return reply.code(204).send();
  });

  app.post('/servers/:id/action', serverAction(context));
}

/** Nova's evacuate API checks (evacuate.py, compute/api.py), then the evacuation engine. */
async function evacuate(
  context: SimContext,
  request: FastifyRequest,
  reply: FastifyReply,
  server: SimServer,
  argument: unknown,
) {
  const { model } = context;
  const mv = request.microversion;
  const body = (argument ?? {}) as Record<string, unknown>;
  if (typeof body !== 'object' || Array.isArray(body))
    throw new NovaFault(400, 'Invalid input for field/attribute evacuate.');
  const allowed = [
    'host',
    'adminPass',
    ...(atLeast(mv, '2.29') && !atLeast(mv, '2.68') ? ['force'] : []),
    ...(atLeast(mv, '2.14') ? [] : ['onSharedStorage']),
  ];
  for (const key of Object.keys(body)) {
    if (!allowed.includes(key)) {
      throw new NovaFault(
        400,
        `Invalid input for field/attribute evacuate. Value: ${JSON.stringify(body)}. Additional properties are not allowed ('${key}' was unexpected)`,
      );
    }
  }
  if (!atLeast(mv, '2.14') && body.onSharedStorage === undefined) {
    throw new NovaFault(
      400,
      "Invalid input for field/attribute evacuate. Value: {}. 'onSharedStorage' is a required property",
    );
  }
  if (body.force === true && !body.host)
    throw new NovaFault(400, "Can't force to a non-provided destination");
  const host = typeof body.host === 'string' ? body.host : null;
  if (host !== null && !model.hosts.has(host)) throw new NovaFault(404, `Compute host ${host} not found.`);
  if (server.host === host) throw new NovaFault(400, "The target host can't be the same one.");
  if (!['active', 'stopped', 'error'].includes(server.vmState)) {
    throw new NovaFault(
      409,
      `Cannot 'evacuate' instance ${server.id} while it is in vm_state ${server.vmState}`,
    );
  }
  const source = server.host ? model.hosts.get(server.host) : undefined;
  if (source && model.serviceIsUp(source))
    throw new NovaFault(400, `Compute service of ${source.name} is still in use.`);
  model.evacuation.start(server, host, atLeast(mv, '2.95'));
  const accept = model.settings.evacuation.acceptMilliseconds;
  if (accept > 0) await sleep(accept);
  if (!atLeast(mv, '2.14')) return reply.code(200).send({ adminPass: 'simulated' });
  return reply.code(200).type('application/json').send();
}

/** What a power action asks of a server, in compute/api.py's words and states. */
interface PowerActionRule {
  /** The method named in Nova's "Cannot '<method>' instance" fault. */
  readonly method: string;
  /** vm_states the action is accepted in. */
  readonly allowed: ReadonlyArray<string>;
  /** task_state while the compute host carries it out. */
  readonly taskState: string;
  /** vm_state and power_state once done. */
  readonly vmState: 'active' | 'stopped';
  readonly powerState: number;
}

const POWER_ACTIONS = {
  'os-stop': {
    method: 'stop',
    allowed: ['active', 'error'],
    taskState: 'powering-off',
    vmState: 'stopped',
    powerState: 4,
  },
  'os-start': {
    method: 'start',
    allowed: ['stopped'],
    taskState: 'powering-on',
    vmState: 'active',
    powerState: 1,
  },
  'reboot-soft': {
    method: 'reboot',
    allowed: ['active'],
    taskState: 'rebooting',
    vmState: 'active',
    powerState: 1,
  },
  'reboot-hard': {
    method: 'reboot',
    allowed: ['active', 'stopped', 'paused', 'suspended', 'error'],
    taskState: 'rebooting_hard',
    vmState: 'active',
    powerState: 1,
  },
} as const satisfies Record<string, PowerActionRule>;

/** `reboot`'s `type` as Nova's schema takes it (HARD, Hard, hard, SOFT, Soft, soft). */
function rebootKind(argument: unknown): 'reboot-soft' | 'reboot-hard' {
  const type = (argument as { type?: unknown } | null)?.type;
  if (typeof type !== 'string' || !['HARD', 'Hard', 'hard', 'SOFT', 'Soft', 'soft'].includes(type))
    throw new NovaFault(
      400,
      `Invalid input for field/attribute type. Value: ${String(type)}. ${JSON.stringify(String(type))} is not one of ['HARD', 'Soft', 'hard', 'SOFT', 'Hard', 'soft']`,
    );
  return type.toUpperCase() === 'HARD' ? 'reboot-hard' : 'reboot-soft';
}

/**
 * os-stop, os-start and reboot (SOFT: an active server; HARD: active, stopped, paused, suspended or
 * error): state checks as compute/api.py; the compute host carries the action out if it runs, else
 * the server keeps its task_state, as with a cast to a dead nova-compute.
 */
function powerAction(context: SimContext, reply: FastifyReply, server: SimServer, rule: PowerActionRule) {
  const { model } = context;
  if (!server.host) throw new NovaFault(409, `Instance ${server.id} is not ready`);
  if (!rule.allowed.includes(server.vmState))
    throw new NovaFault(
      409,
      `Cannot '${rule.method}' instance ${server.id} while it is in vm_state ${server.vmState}`,
    );
  if (server.taskState !== null)
    throw new NovaFault(
      409,
      `Cannot '${rule.method}' instance ${server.id} while it is in task_state ${server.taskState}`,
    );
  server.taskState = rule.taskState;
  model.touch(server);
  const host = model.hosts.get(server.host);
  if (host && model.heartbeating(host)) {
    setTimeout(() => {
      if (!model.servers.get(server.id) || server.taskState !== rule.taskState) return;
      server.vmState = rule.vmState;
      server.powerState = rule.powerState;
      server.taskState = null;
      model.touch(server);
    }, 50).unref();
  }
  return reply.code(202).send();
}

/**
 * `GET /servers` (`detail` false: id, name, links) and `GET /servers/detail`: the admin project's servers
 * or all (`all_tenants`), filtered by `host`, `status`, `changes-since` and `name`, paged by `limit`/`marker`.
 */
function listServers(model: CloudModel, detail: boolean) {
  return async (request: FastifyRequest) => {
    const query = request.query as Query;
    const mv = request.microversion;
    const { limit, marker } = pagination(query);
    const allTenants =
      TRUE_WORDS.includes((query.all_tenants ?? '').toLowerCase()) || query.all_tenants === '';
    const status = query.status?.toUpperCase();
    const since = query['changes-since'] ? parseClientTimestamp(query['changes-since']) : null;
    const accept = (server: SimServer) =>
      (allTenants || server.tenantId === 'admin') &&
      (status === undefined || serverStatus(server) === status) &&
      (since === null || server.updatedAt >= since) &&
      (query.name === undefined || new RegExp(query.name).test(server.name));
    const page = model.servers.page({
      ...(query.host === undefined ? {} : { host: query.host }),
      accept,
      ...(marker === undefined ? {} : { marker }),
      limit,
    });
    if (!page) throw new NovaFault(400, `marker [${marker}] not found`);
    const base = computeBase(request);
    const servers = page.servers.map((server) =>
      detail
        ? serverView(model, server, mv, base)
        : { id: server.id, name: server.name, links: serverView(model, server, mv, base).links },
    );
    const body: Record<string, unknown> = { servers };
    const links = nextLinks(
      base,
      detail ? '/servers/detail' : '/servers',
      query,
      page.full,
      page.servers.at(-1)?.id,
    );
    if (links) body.servers_links = links;
    return body;
  };
}

/**
 * A boot request's `tags` (2.52+; before, Nova's schema refuses the property): strings of 1 to 60
 * characters without `/` or `,`, at most 50 (Nova's server tag limits).
 */
function serverTags(value: unknown, microversion: string): string[] {
  if (value === undefined) return [];
  if (!atLeast(microversion, '2.52'))
    throw new NovaFault(
      400,
      "Invalid input for field/attribute server. Additional properties are not allowed ('tags' was unexpected)",
    );
  const valid =
    Array.isArray(value) &&
    value.length <= 50 &&
    value.every((tag) => typeof tag === 'string' && tag.length >= 1 && tag.length <= 60 && !/[/,]/.test(tag));
  if (!valid) throw new NovaFault(400, 'Invalid input for field/attribute tags.');
  return [...(value as string[])];
}

/**
 * `POST /servers`: the flavor and image must exist; `host` (2.74+) names the host, else the enabled, up host
 * with the fewest servers takes it (500 when none); `tags` from 2.52. Answers 202 with id, links and `adminPass`.
 */
function createServer(model: CloudModel) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const body = (request.body ?? {}) as { server?: Record<string, unknown> };
    const spec = body.server;
    if (!spec || typeof spec !== 'object')
      throw new NovaFault(400, "Invalid input for field/attribute server. 'server' is a required property");
    if (typeof spec.name !== 'string' || spec.name === '')
      throw new NovaFault(400, "Invalid input for field/attribute server. 'name' is a required property");
    const flavorId = String(spec.flavorRef ?? '');
    if (!model.flavors.has(flavorId)) throw new NovaFault(400, `Flavor ${flavorId} could not be found.`);
    const imageId = String(spec.imageRef ?? '');
    if (!model.images.has(imageId)) throw new NovaFault(400, `Image ${imageId} could not be found.`);
    const tags = serverTags(spec.tags, request.microversion);
    let hostName = spec.host as string | undefined;
    if (hostName !== undefined && !atLeast(request.microversion, '2.74')) {
      throw new NovaFault(
        400,
        "Invalid input for field/attribute server. Additional properties are not allowed ('host' was unexpected)",
      );
    }
    if (hostName !== undefined) {
      const host = model.hosts.get(hostName);
      if (!host) throw new NovaFault(400, `Compute host ${hostName} could not be found.`);
    } else {
      const candidates = [...model.hosts.values()].filter(
        (host) => !host.disabled && model.serviceIsUp(host),
      );
      candidates.sort(
        (left, right) => model.servers.countOnHost(left.name) - model.servers.countOnHost(right.name),
      );
      hostName = candidates[0]?.name;
      if (!hostName)
        throw new NovaFault(500, 'No valid host was found. There are not enough hosts available.');
    }
    const server = model.addServer({
      name: spec.name,
      host: hostName,
      flavorId,
      imageId,
      ...(spec.metadata && typeof spec.metadata === 'object'
        ? { metadata: spec.metadata as Record<string, string> }
        : {}),
      tags,
    });
    const base = computeBase(request);
    reply.code(202);
    return {
      server: {
        id: server.id,
        links: serverView(model, server, request.microversion, base).links,
        'OS-DCF:diskConfig': 'MANUAL',
        security_groups: [{ name: 'default' }],
        adminPass: 'simulated',
      },
    };
  };
}

/** `POST /servers/{id}/action`: `evacuate`, `lock`, `unlock`, `os-resetState`, `os-stop`, `os-start` and `reboot`. */
function serverAction(context: SimContext) {
  const { model } = context;
  const lookup = (id: string): SimServer => lookupServer(model, id);
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const { id } = request.params as { id: string };
    const body = (request.body ?? {}) as Record<string, unknown>;
    const [action] = Object.keys(body);
    if (!action) throw new NovaFault(400, 'Malformed request body');
    const server = lookup(id);
    switch (action) {
      case 'evacuate':
        return evacuate(context, request, reply, server, body.evacuate);
      case 'lock': {
        const argument = body.lock as { locked_reason?: unknown } | null;
        if (argument && argument.locked_reason !== undefined && !atLeast(request.microversion, '2.73')) {
          throw new NovaFault(
            400,
            "Invalid input for field/attribute lock. Value: {'locked_reason': ...}. None is not of type 'null'",
          );
        }
        server.locked = true;
        server.lockedReason = typeof argument?.locked_reason === 'string' ? argument.locked_reason : null;
        model.touch(server);
        return reply.code(202).send();
      }
      case 'unlock':
        server.locked = false;
        server.lockedReason = null;
        model.touch(server);
        return reply.code(202).send();
      case 'os-resetState': {
        const state = (body['os-resetState'] as { state?: unknown } | null)?.state;
        if (state !== 'active' && state !== 'error') {
          throw new NovaFault(
            400,
            `Invalid input for field/attribute state. Value: ${String(state)}. '${String(state)}' is not one of ['active', 'error']`,
          );
        }
        server.vmState = state;
        server.taskState = null;
        model.touch(server);
        return reply.code(202).send();
      }
      case 'os-stop':
      case 'os-start':
        return powerAction(context, reply, server, POWER_ACTIONS[action]);
      case 'reboot':
        return powerAction(context, reply, server, POWER_ACTIONS[rebootKind(body.reboot)]);
      default:
        throw new NovaFault(400, `There is no such action: ${action}`);
    }
  };
}

/** The server of that id; throws NovaFault 404 when there is none. */
export function lookupServer(model: CloudModel, id: string): SimServer {
  const server = model.servers.get(id);
  if (!server) throw new NovaFault(404, `Instance ${id} could not be found.`);
  return server;
}
