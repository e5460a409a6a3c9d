import { readFile } from 'node:fs/promises';
import formBody from '@fastify/formbody';
import type { Logger } from '@lifeguard/runtime';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import type { ConsoleState } from '../console-state.ts';
import { registerActionRoute } from './action-route.ts';
import { registerLiveRoute } from './live-route.ts';
import { registerPageRoutes } from './page-routes.ts';

/** The console's stylesheet, live-update script and icon, shipped in the package's `static/` folder. */
const STATIC_FILES: Readonly<Record<string, string>> = {
  'console.css': 'text/css; charset=utf-8',
  'console.js': 'text/javascript; charset=utf-8',
  'favicon.svg': 'image/svg+xml',
};

/** Headers on every answer: no framing by other sites, no inline or foreign scripts, no sniffing. */
const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; connect-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
};

function registerHealthRoutes(app: FastifyInstance, state: ConsoleState): void {
  // Liveness: the process answers. The console keeps serving with brokers down, so they are readiness.
  app.get('/healthz', async () => ({ status: 'ok', checks: { http: 'ok' } }));
  app.get('/readyz', async (_request, reply) => {
    const redis = await state.connections
      .redis()
      .then((client) => client.ping())
      .then(
        (answer) => (answer === 'PONG' ? 'ok' : 'failing'),
        (error: Error) => `error: ${error.message}`,
      );
    const rabbitmq = state.feed.running ? 'ok' : 'not following the events exchange';
    const ok = redis === 'ok' && rabbitmq === 'ok';
    return reply
      .code(ok ? 200 : 503)
      .send({ status: ok ? 'ready' : 'not ready', checks: { redis, rabbitmq } });
  });
  app.get('/metrics', async (_request, reply) =>
    reply.type(state.registry.contentType).send(await state.registry.metrics()),
  );
}

/**
 * The console's HTTP server: the pages (`/`, `/incidents`, `/incidents/:id`, `/queues`,
 * `/provisioning`), `/events` (server-sent events), `POST /actions/...`, `/static/...`, `/favicon.ico`, and
 * `/healthz`, `/readyz`, `/metrics` as every worker has them.
 */
export async function createConsoleServer(state: ConsoleState, logger: Logger): Promise<FastifyInstance> {
  const app: FastifyInstance = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    // Pages re-read every few seconds: one log line per request would drown the rest.
    logController: new LogController({ disableRequestLogging: true }),
    forceCloseConnections: true,
    bodyLimit: 16 * 1024,
  });
  await app.register(formBody);
  app.addHook('onSend', async (_request, reply) => {
    reply.headers(SECURITY_HEADERS);
  });
  const staticDirectory = new URL('../../static/', import.meta.url);
  app.get('/static/:file', async (request, reply) => {
    const file = (request.params as { file: string }).file;
    const type = STATIC_FILES[file];
    if (!type) return reply.code(404).send({ error: 'not found' });
    return reply
      .type(type)
      .header('cache-control', 'no-cache')
      .send(await readFile(new URL(file, staticDirectory)));
  });
  // Pages name their icon; a browser that asks for the conventional path anyway is sent to it.
  app.get('/favicon.ico', async (_request, reply) => reply.redirect('/static/favicon.svg', 301));
  registerHealthRoutes(app, state);
  registerPageRoutes(app, state);
  registerLiveRoute(app, state);
  registerActionRoute(app, state);
  return app;
}
