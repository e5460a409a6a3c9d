import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import Fastify, { type FastifyInstance } from 'fastify';
import { registerControlRoutes } from './control-routes.ts';
import { registerGlanceRoutes } from './glance-routes.ts';
import { registerKeystoneRoutes } from './keystone-routes.ts';
import { registerNovaCatalogRoutes, versionEntry } from './nova-catalog-routes.ts';
import { registerNovaMetadataRoutes } from './nova-metadata-routes.ts';
import { installNovaHooks } from './nova-plumbing.ts';
import { registerNovaServerRoutes } from './nova-server-routes.ts';
import { registerNovaServiceRoutes } from './nova-service-routes.ts';
import { recordRequests } from './request-record.ts';
import type { SimContext } from './sim-context.ts';
import type { SimControl } from './sim-control.ts';

/**
 * Holds an answer back for `milliseconds`, or less when the caller hangs up first (a client that
 * gave up; the answer would go nowhere): a delay never keeps a closed connection, nor the server's
 * close, waiting.
 */
const holdAnswer = (milliseconds: number, request: IncomingMessage) =>
  new Promise<void>((resolve) => {
    // The socket's close, not the request's: a request without a body has ended (and emitted its own
    // close) before the hold starts, so only the socket says that the caller hung up.
    const connection = request.socket;
    if (connection.destroyed) return resolve();
    const timer = setTimeout(done, milliseconds);
    connection.once('close', done);
    function done() {
      clearTimeout(timer);
      connection.off('close', done);
      resolve();
    }
  });

/**
 * The API listener of cloud-sim: one HTTP port laid out as devstack does, Nova under `/compute`
 * (`/compute/v2.1/...`), Glance under `/image`, Keystone under `/identity`, and the control API under
 * `/_sim`. Every API answer carries `x-openstack-request-id: req-<uuid>`; the fault injector can
 * delay answers or replace them; every Nova, Glance and Keystone request is kept in `sim.requests`.
 */
export function buildApiServer(sim: SimControl, context: SimContext): FastifyInstance {
  const app = Fastify({
    logger: false,
    genReqId: () => `req-${randomUUID()}`,
    // 20,000 servers in one page are big; Nova itself caps pages at 1000.
    bodyLimit: 10 * 1024 * 1024,
    // A metadata key in the path (`/servers/{id}/metadata/{key}`) may be 255 characters, as Nova takes it.
    routerOptions: { maxParamLength: 1024 },
    // Closing the simulated cloud ends every connection, one whose answer is held back included.
    forceCloseConnections: true,
  });

  // Empty bodies with a JSON content type are fine (Nova ignores them); broken JSON is a 400.
  const parseJson = (
    _request: unknown,
    body: string,
    done: (error: Error | null, value?: unknown) => void,
  ) => {
    if (body.trim() === '') return done(null, undefined);
    try {
      done(null, JSON.parse(body));
    } catch {
      done(Object.assign(new Error('Malformed request body'), { statusCode: 400 }));
    }
  };
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser(
    ['application/json', 'application/openstack-images-v2.1-json-patch'],
    { parseAs: 'string' },
    parseJson,
  );

  app.addHook('onRequest', async (request, reply) => {
    if (request.url.startsWith('/_sim')) return undefined;
    const injected = context.faults.take(request.url);
    if (injected) {
      reply
        .code(injected.status)
        .type(injected.contentType)
        .header('x-openstack-request-id', request.id)
        .send(injected.body);
      return reply;
    }
    const delay = context.faults.delayFor(request.url);
    if (delay > 0) await holdAnswer(delay, request.raw);
    return undefined;
  });
  app.addHook('onSend', async (request, reply, payload) => {
    if (!request.url.startsWith('/_sim')) reply.header('x-openstack-request-id', request.id);
    return payload;
  });

  recordRequests(app, sim.requests, 'api');

  app.get('/', async (request) => ({
    versions: [versionEntry(`${request.protocol}://${request.host}/compute`)],
  }));
  app.get('/compute', async (request) => ({
    versions: [versionEntry(`${request.protocol}://${request.host}/compute`)],
  }));
  app.get('/compute/', async (request) => ({
    versions: [versionEntry(`${request.protocol}://${request.host}/compute`)],
  }));

  app.register(
    async (scope) => {
      installNovaHooks(scope, context);
      registerNovaServiceRoutes(scope, context);
      registerNovaServerRoutes(scope, context);
      registerNovaMetadataRoutes(scope, context);
      registerNovaCatalogRoutes(scope, context);
    },
    { prefix: '/compute/v2.1' },
  );
  app.register(async (scope) => registerGlanceRoutes(scope, context), { prefix: '/image' });
  app.register(async (scope) => registerKeystoneRoutes(scope, context), { prefix: '/identity' });
  app.register(async (scope) => registerControlRoutes(scope, sim), { prefix: '/_sim' });
  return app;
}
