import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { UnknownFlavorError, UnknownHostError } from '../model/model-errors.ts';
import type { SimControl } from './sim-control.ts';

const HostList = z.object({ hosts: z.array(z.string()).min(1) });
const Delay = z.object({
  milliseconds: z.number().int().min(0),
  pathPrefix: z.string().nullable().optional(),
});
const Injection = z.object({
  status: z.number().int().min(100).max(599),
  body: z.string().default(''),
  contentType: z.string().default('application/json'),
  pathPrefix: z.string().optional(),
  count: z.number().int().min(1).default(1),
});
const Timing = z.object({
  acceptMilliseconds: z.number().min(0).optional(),
  rebuildMilliseconds: z.number().min(0).optional(),
});
const Failures = z.object({
  servers: z.array(z.string()).min(1),
  mode: z.enum(['error', 'failed']).default('failed'),
  times: z.number().int().min(1).optional(),
});
const Quirks = z.object({
  alreadyOffStatus: z.union([z.literal(204), z.literal(400), z.literal(409)]).optional(),
  rejectOnAfterForceOff: z.number().int().min(0).optional(),
  unreachable: z.boolean().optional(),
});
const NewServers = z.object({
  host: z.string(),
  count: z.number().int().min(1).max(10_000).default(1),
  name: z.string().optional(),
  flavorId: z.string().optional(),
  metadata: z.record(z.string(), z.string()).optional(),
  vmState: z.enum(['active', 'stopped', 'error']).optional(),
});

function parse<Schema extends z.ZodType>(
  schema: Schema,
  body: unknown,
  reply: FastifyReply,
): z.output<Schema> | null {
  const result = schema.safeParse(body ?? {});
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  reply.code(400).send({ error: `${issue?.path.join('.') || 'body'}: ${issue?.message ?? 'invalid'}` });
  return null;
}

/**
 * cloud-sim's control API under `/_sim` (no auth; bind it to loopback): state, host faults
 * (kill, revive, power, partition, heal), API delay, injected answers, evacuation timing and
 * failures, BMC quirks, evacuate-call counts, received external events, bulk servers.
 */
export function registerControlRoutes(app: FastifyInstance, sim: SimControl): void {
  // A change that names an unknown host or flavor fails before it changes anything: 404 with the reason.
  app.setErrorHandler((error, _request, reply) => {
    if (error instanceof UnknownHostError || error instanceof UnknownFlavorError)
      return reply.code(404).send({ error: error.message });
    return reply.send(error);
  });
  app.get('/state', async () => ({
    hosts: sim.hostStates(),
    servers: sim.model.servers.size,
    migrations: sim.model.migrations.size,
    evacuationsInFlight: sim.model.evacuation.inFlight,
    urls: sim.urls,
  }));
  registerHostFaultRoutes(app, sim);
  registerNetworkFaultRoutes(app, sim);
  registerEvacuationControlRoutes(app, sim);
  app.post('/servers', addServers(sim));
}

/** Host faults: kill, revive, power off and on, and the BMC's quirks. */
function registerHostFaultRoutes(app: FastifyInstance, sim: SimControl): void {
  const withHost = (reply: FastifyReply, host: string, run: () => unknown) => {
    if (!sim.model.hosts.has(host)) return reply.code(404).send({ error: `no host named ${host}` });
    run();
    return reply.code(204).send();
  };
  app.post('/hosts/:host/kill', async (request, reply) =>
    withHost(reply, (request.params as { host: string }).host, () =>
      sim.killHost((request.params as { host: string }).host),
    ),
  );
  app.post('/hosts/:host/revive', async (request, reply) =>
    withHost(reply, (request.params as { host: string }).host, () =>
      sim.reviveHost((request.params as { host: string }).host),
    ),
  );
  app.post('/hosts/:host/power-off', async (request, reply) =>
    withHost(reply, (request.params as { host: string }).host, () =>
      sim.model.powerOff((request.params as { host: string }).host),
    ),
  );
  app.post('/hosts/:host/power-on', async (request, reply) =>
    withHost(reply, (request.params as { host: string }).host, () =>
      sim.model.powerOn((request.params as { host: string }).host),
    ),
  );
  app.put('/hosts/:host/bmc', async (request, reply) => {
    const quirks = parse(Quirks, request.body, reply);
    if (!quirks) return reply;
    const { host } = request.params as { host: string };
    return withHost(reply, host, () =>
      sim.setBmcQuirks(
        host,
        Object.fromEntries(Object.entries(quirks).filter(([, value]) => value !== undefined)),
      ),
    );
  });
  app.get('/hosts/:host/bmc', async (request, reply) => {
    const { host } = request.params as { host: string };
    if (!sim.model.hosts.has(host)) return reply.code(404).send({ error: `no host named ${host}` });
    return sim.bmc(host);
  });
}

/** Partition and heal hosts, delay API answers, inject answers. */
function registerNetworkFaultRoutes(app: FastifyInstance, sim: SimControl): void {
  app.post('/partition', async (request, reply) => {
    const body = parse(HostList, request.body, reply);
    if (!body) return reply;
    sim.partition(body.hosts);
    return reply.code(204).send();
  });
  app.post('/heal', async (request, reply) => {
    const body = request.body === undefined ? {} : parse(HostList.partial(), request.body, reply);
    if (!body) return reply;
    sim.heal(body.hosts);
    return reply.code(204).send();
  });
  app.put('/api-delay', async (request, reply) => {
    const body = parse(Delay, request.body, reply);
    if (!body) return reply;
    sim.setApiDelay(body.milliseconds, body.pathPrefix ?? null);
    return reply.code(204).send();
  });
  app.post('/inject-response', async (request, reply) => {
    const body = parse(Injection, request.body, reply);
    if (!body) return reply;
    sim.injectResponse(
      Object.fromEntries(Object.entries(body).filter(([, value]) => value !== undefined)) as Parameters<
        SimControl['injectResponse']
      >[0],
    );
    return reply.code(204).send();
  });
}

/** Evacuation timing and failures, evacuate-call counts and received external events. */
function registerEvacuationControlRoutes(app: FastifyInstance, sim: SimControl): void {
  app.put('/evacuation', async (request, reply) => {
    const body = parse(Timing, request.body, reply);
    if (!body) return reply;
    sim.setEvacuationTiming(
      Object.fromEntries(Object.entries(body).filter(([, value]) => value !== undefined)),
    );
    return reply.code(204).send();
  });
  app.post('/evacuation-failures', async (request, reply) => {
    const body = parse(Failures, request.body, reply);
    if (!body) return reply;
    sim.failEvacuations(body.servers, body.mode, body.times);
    return reply.code(204).send();
  });
  app.delete('/evacuation-failures', async (_request, reply) => {
    sim.model.evacuation.clearFailures();
    return reply.code(204).send();
  });
  app.get('/evacuate-calls', async () => ({ calls: sim.evacuateCalls() }));
  app.get('/external-events', async () => ({ events: sim.externalEvents() }));
}

/** Bulk servers: `count` servers on `host`, named `name-1`... when more than one. */
function addServers(sim: SimControl) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const body = parse(NewServers, request.body, reply);
    if (!body) return reply;
    if (!sim.model.hosts.has(body.host)) return reply.code(404).send({ error: `no host named ${body.host}` });
    const ids: string[] = [];
    for (let index = 0; index < body.count; index++) {
      const server = sim.addServer({
        host: body.host,
        ...(body.name ? { name: body.count > 1 ? `${body.name}-${index + 1}` : body.name } : {}),
        ...(body.flavorId ? { flavorId: body.flavorId } : {}),
        ...(body.metadata ? { metadata: body.metadata } : {}),
        ...(body.vmState ? { vmState: body.vmState } : {}),
      });
      ids.push(server.id);
    }
    return reply.code(201).send({ servers: ids });
  };
}
