import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { type RequestRecord, recordRequests } from '../http/request-record.ts';
import type { CloudModel } from '../model/cloud-model.ts';
import type { SimHost } from '../model/records.ts';
import { selfSignedCertificate } from './certificate.ts';

const RESET_TYPES = ['On', 'ForceOff', 'GracefulShutdown', 'ForceRestart', 'PowerCycle', 'Nmi'];

function redfishError(reply: FastifyReply, status: number, message: string): FastifyReply {
  return reply
    .code(status)
    .type('application/json')
    .send({
      error: {
        code: 'Base.1.8.GeneralError',
        message,
        '@Message.ExtendedInfo': [
          { MessageId: 'Base.1.8.GeneralError', Message: message, Severity: 'Critical' },
        ],
      },
    });
}

/** The host whose BMC credentials the request's basic auth carries, or null. */
function credentialsOf(request: FastifyRequest, model: CloudModel): SimHost | null | 'none' {
  const header = request.headers.authorization;
  if (!header?.startsWith('Basic ')) return 'none';
  const decoded = Buffer.from(header.slice(6), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  const username = decoded.slice(0, colon);
  const password = decoded.slice(colon + 1);
  for (const host of model.hosts.values()) {
    if (host.bmc.username === username && host.bmc.password === password) return host;
  }
  return null;
}

function systemView(host: SimHost): Record<string, unknown> {
  const path = `/redfish/v1/Systems/${host.bmc.systemId}`;
  return {
    '@odata.context': '/redfish/v1/$metadata#ComputerSystem.ComputerSystem',
    '@odata.id': path,
    '@odata.type': '#ComputerSystem.v1_10_0.ComputerSystem',
    Id: host.bmc.systemId,
    Name: `System of ${host.name}`,
    HostName: host.name,
    UUID: host.bmc.uuid,
    SystemType: 'Physical',
    Manufacturer: 'lifeguard cloud-sim',
    Model: 'Simulated Compute Node',
    PowerState: host.poweredOn ? 'On' : 'Off',
    Status: { State: 'Enabled', Health: 'OK' },
    Actions: {
      '#ComputerSystem.Reset': {
        target: `${path}/Actions/ComputerSystem.Reset`,
        'ResetType@Redfish.AllowableValues': RESET_TYPES,
      },
    },
  };
}

/**
 * One HTTPS Redfish service holding a BMC per simulated host (`/redfish/v1/Systems/<host>`), faithful
 * enough for Debian's `fence_redfish`: service root, Systems collection, ComputerSystem with
 * `PowerState` and `UUID`, and `Actions/ComputerSystem.Reset` (`On`, `ForceOff`, ...). Each BMC has
 * its own basic-auth credentials, and the Systems collection lists only the system those
 * credentials open (so fence_redfish without `--systems-uri` finds the right one). Powering a host
 * off stops its nova-compute (heartbeats stop); powering it on boots it (nova-compute restarts).
 * Quirks per BMC: "already off" answered 204, 400 (iLO) or 409 (iDRAC); `On` right after `ForceOff`
 * rejected N times; unreachable (connections reset). With `requests`, every request is kept there
 * (a power-off is a `POST .../Actions/ComputerSystem.Reset` with `ResetType: ForceOff`).
 */
export async function startRedfishServer(
  model: CloudModel,
  options: { host: string; port: number; requests?: RequestRecord },
): Promise<FastifyInstance> {
  const certificate = await selfSignedCertificate();
  const app = Fastify({ https: { key: certificate.key, cert: certificate.cert }, logger: false });

  dropUnreachable(app, model);
  if (options.requests) recordRequests(app, options.requests, 'redfish');

  registerServiceRoot(app);
  registerSystemRoutes(app, model);

  await app.listen({ host: options.host, port: options.port });
  return app;
}

/** A request to an unreachable BMC's system has its connection reset, as a BMC that is down. */
function dropUnreachable(app: FastifyInstance, model: CloudModel): void {
  app.addHook('onRequest', async (request, reply) => {
    const match = /^\/redfish\/v1\/Systems\/([^/]+)/.exec(request.url);
    const host = match
      ? [...model.hosts.values()].find((each) => each.bmc.systemId === decodeURIComponent(match[1]!))
      : undefined;
    if (host?.bmc.unreachable) {
      request.raw.socket.destroy();
      return reply;
    }
    return undefined;
  });
}

/** The service root (`/redfish/v1`, `/redfish/v1/` redirected to it). */
function registerServiceRoot(app: FastifyInstance): void {
  app.get('/redfish/v1', async () => ({
    '@odata.id': '/redfish/v1',
    '@odata.type': '#ServiceRoot.v1_5_0.ServiceRoot',
    Id: 'RootService',
    Name: 'Root Service',
    RedfishVersion: '1.6.0',
    Systems: { '@odata.id': '/redfish/v1/Systems' },
  }));
  app.get('/redfish/v1/', async (_request, reply) => reply.redirect('/redfish/v1', 301));
}

/** The host whose BMC the request's credentials open (any, or `host`'s), or null after answering 401. */
function authorised(
  model: CloudModel,
  request: FastifyRequest,
  reply: FastifyReply,
  host?: SimHost,
): SimHost | null {
  const caller = credentialsOf(request, model);
  if (caller === 'none' || caller === null || (host && caller !== host)) {
    reply.header('www-authenticate', 'Basic realm="Redfish"');
    redfishError(reply, 401, 'The request requires authentication: the credentials are missing or wrong.');
    return null;
  }
  return caller;
}

/** The host of the system the path names (404 when none) if the credentials open its BMC (else 401), or null. */
function systemOf(model: CloudModel, request: FastifyRequest, reply: FastifyReply): SimHost | null {
  const { id } = request.params as { id: string };
  const host = [...model.hosts.values()].find((each) => each.bmc.systemId === id);
  if (!host) {
    redfishError(reply, 404, `The resource /redfish/v1/Systems/${id} was not found.`);
    return null;
  }
  return authorised(model, request, reply, host);
}

/** The Systems collection, a ComputerSystem and its `ComputerSystem.Reset` action. */
function registerSystemRoutes(app: FastifyInstance, model: CloudModel): void {
  app.get('/redfish/v1/Systems', async (request, reply) => {
    const caller = authorised(model, request, reply);
    if (!caller) return reply;
    return {
      '@odata.id': '/redfish/v1/Systems',
      '@odata.type': '#ComputerSystemCollection.ComputerSystemCollection',
      Name: 'Computer System Collection',
      'Members@odata.count': 1,
      Members: [{ '@odata.id': `/redfish/v1/Systems/${caller.bmc.systemId}` }],
    };
  });

  app.get('/redfish/v1/Systems/:id', async (request, reply) => {
    const host = systemOf(model, request, reply);
    return host ? systemView(host) : reply;
  });

  app.post('/redfish/v1/Systems/:id/Actions/ComputerSystem.Reset', resetSystem(model));
}

/**
 * `ComputerSystem.Reset`: `ForceOff`/`GracefulShutdown` power the host off (already off: the BMC's
 * `alreadyOffStatus`), `On` powers it on (rejected while `onRejectionsLeft`), `ForceRestart`/`PowerCycle`
 * power it off and on, `Nmi` does nothing.
 */
function resetSystem(model: CloudModel) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const host = systemOf(model, request, reply);
    if (!host) return reply;
    const resetType = (request.body as { ResetType?: unknown } | undefined)?.ResetType;
    if (typeof resetType !== 'string' || !RESET_TYPES.includes(resetType)) {
      return redfishError(
        reply,
        400,
        `The value ${JSON.stringify(resetType)} for the property ResetType is not in the list of acceptable values.`,
      );
    }
    switch (resetType) {
      case 'ForceOff':
      case 'GracefulShutdown':
        if (!host.poweredOn) {
          if (host.bmc.alreadyOffStatus !== 204)
            return redfishError(reply, host.bmc.alreadyOffStatus, 'The server is already powered off.');
          return reply.code(204).send();
        }
        model.powerOff(host.name);
        return reply.code(204).send();
      case 'On':
        if (host.poweredOn) return reply.code(204).send();
        if (host.bmc.onRejectionsLeft > 0) {
          host.bmc.onRejectionsLeft--;
          return redfishError(
            reply,
            400,
            'The request could not be processed: the system is still powering off.',
          );
        }
        model.powerOn(host.name);
        return reply.code(204).send();
      case 'ForceRestart':
      case 'PowerCycle':
        model.powerOff(host.name);
        host.bmc.onRejectionsLeft = 0;
        model.powerOn(host.name);
        return reply.code(204).send();
      default:
        return reply.code(204).send();
    }
  };
}
