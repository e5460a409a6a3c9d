import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { requestedMicroversion } from './microversion.ts';
import type { SimContext } from './sim-context.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The microversion of a Compute API request (2.1 when none was asked for). */
    microversion: string;
  }
}

/** Nova's fault names by status (nova/api/openstack/wsgi.py Fault). */
const FAULT_NAMES: Record<number, string> = {
  400: 'badRequest',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'itemNotFound',
  405: 'badMethod',
  409: 'conflictingRequest',
  413: 'overLimit',
  415: 'badMediaType',
  429: 'overLimit',
  501: 'notImplemented',
  503: 'serviceUnavailable',
};

/** An error a route throws to answer with Nova's fault body. */
export class NovaFault extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** Sends `{"<faultName>": {"code": <status>, "message": "<message>"}}` as Nova does. */
export function sendNovaFault(reply: FastifyReply, status: number, message: string): FastifyReply {
  const name = FAULT_NAMES[status] ?? 'computeFault';
  return reply
    .code(status)
    .type('application/json; charset=UTF-8')
    .send({ [name]: { code: status, message } });
}

/** Keystone's 401 as keystonemiddleware sends it. */
export function sendUnauthorized(reply: FastifyReply, context: SimContext): FastifyReply {
  return reply
    .code(401)
    .header('www-authenticate', `Keystone uri="${context.baseUrl}/identity"`)
    .type('application/json')
    .send({
      error: {
        code: 401,
        title: 'Unauthorized',
        message: 'The request you have made requires authentication.',
      },
    });
}

/**
 * Authenticates a Nova/Glance request: with noauth2 the token is `<user>:<project>` (none: Nova's
 * NoAuthMiddleware answers 204 with the token to use); with keystone it must be a live token of the
 * simulated Keystone.
 * @returns true when the request may proceed (otherwise the reply was sent)
 */
export function authenticate(
  request: FastifyRequest,
  reply: FastifyReply,
  context: SimContext,
  service: 'compute' | 'image',
): boolean {
  const token = request.headers['x-auth-token'];
  const value = Array.isArray(token) ? token[0] : token;
  if (context.auth === 'keystone') {
    if (context.identity.validate(value)) return true;
    sendUnauthorized(reply, context);
    return false;
  }
  if (service === 'image') return true;
  if (!value) {
    reply
      .code(204)
      .header('x-auth-token', 'admin:admin')
      .header('x-server-management-url', `${context.baseUrl}/compute/v2.1/admin`)
      .send();
    return false;
  }
  return true;
}

/**
 * The hooks of the Compute API scope: authentication, microversion negotiation (400/406 as Nova
 * words them), the microversion echoed in `OpenStack-API-Version` / `X-OpenStack-Nova-API-Version`
 * with `Vary`, `x-compute-request-id`, and Nova fault bodies for every error.
 */
export function installNovaHooks(app: FastifyInstance, context: SimContext): void {
  app.decorateRequest('microversion', '2.1');
  app.addHook('onRequest', async (request, reply) => {
    const result = requestedMicroversion(request.headers);
    if (!result.ok) {
      sendNovaFault(reply, result.status, result.message);
      return reply;
    }
    request.microversion = result.version;
    // The version document is public, as Nova's.
    if (/^\/compute\/v2\.1\/?(\?.*)?$/.test(request.url)) return undefined;
    if (!authenticate(request, reply, context, 'compute')) return reply;
    return undefined;
  });
  app.addHook('onSend', async (request, reply, payload) => {
    reply.header('openstack-api-version', `compute ${request.microversion}`);
    reply.header('x-openstack-nova-api-version', request.microversion);
    reply.header('vary', 'OpenStack-API-Version, X-OpenStack-Nova-API-Version');
    reply.header('x-compute-request-id', request.id);
    return payload;
  });
  app.setErrorHandler((error: Error & { statusCode?: number; validation?: unknown }, _request, reply) => {
    if (error instanceof NovaFault) return sendNovaFault(reply, error.status, error.message);
    if (error.statusCode === 400 || error.validation) return sendNovaFault(reply, 400, error.message);
    if (error.statusCode === 415) return sendNovaFault(reply, 415, error.message);
    return sendNovaFault(reply, 500, `Unexpected API Error. ${error.message}`);
  });
  app.setNotFoundHandler((_request, reply) => {
    reply.code(404).type('application/json; charset=UTF-8').send({
      message: 'The resource could not be found.<br /><br />\n\n\n',
      code: '404 Not Found',
      title: 'Not Found',
    });
  });
}

/** Reads Nova's `limit` (capped at `[api] max_limit` 1000) and `marker` query parameters. */
export function pagination(
  query: Record<string, string | undefined>,
  maxLimit = 1000,
): { limit: number; marker: string | undefined } {
  let limit = maxLimit;
  if (query.limit !== undefined) {
    if (!/^-?\d+$/.test(query.limit))
      throw new NovaFault(
        400,
        `Invalid input for query parameters limit. Value: ${query.limit}. '${query.limit}' does not match '^[0-9]*$'`,
      );
    const value = Number(query.limit);
    if (value < 0)
      throw new NovaFault(
        400,
        `Invalid input for query parameters limit. Value: ${query.limit}. '${query.limit}' does not match '^[0-9]*$'`,
      );
    limit = Math.min(value, maxLimit);
  }
  return { limit, marker: query.marker };
}

/** `[{"rel": "next", "href": "<base><path>?<query>&marker=<id>"}]` when the page is full. */
export function nextLinks(
  base: string,
  path: string,
  query: Record<string, string | undefined>,
  full: boolean,
  lastId: string | number | undefined,
): Array<{ rel: string; href: string }> | undefined {
  if (!full || lastId === undefined) return undefined;
  const parameters = new URLSearchParams();
  for (const [key, value] of Object.entries(query))
    if (value !== undefined && key !== 'marker') parameters.set(key, value);
  parameters.set('marker', String(lastId));
  return [{ rel: 'next', href: `${base}${path}?${parameters.toString()}` }];
}

/** The base URL of the Compute API as the client reached it (`http://host:port/compute/v2.1`). */
export function computeBase(request: FastifyRequest): string {
  return `${request.protocol}://${request.host}/compute/v2.1`;
}

export const UUID_PATTERN = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
