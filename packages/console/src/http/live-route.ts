import type { FastifyInstance } from 'fastify';
import type { ConsoleState } from '../console-state.ts';
import type { LiveNotice } from '../live/event-feed.ts';

/** Seconds between comment lines that keep an idle `/events` stream open through proxies. */
export const KEEPALIVE_SECONDS = 15;

/**
 * `GET /events`: server-sent events. `event: lifeguard` with `{type, host, incidentId, occurredAt}`
 * for every event on the events exchange; `event: feed` with `{connected}` when the console starts or
 * stops following it (RabbitMQ down: the pages then say so and re-read on their interval).
 */
export function registerLiveRoute(app: FastifyInstance, state: ConsoleState): void {
  app.get('/events', (request, reply) => {
    reply.hijack();
    const raw = reply.raw;
    raw.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      connection: 'keep-alive',
    });
    const send = (event: string, data: unknown) =>
      raw.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    send('feed', { connected: state.feed.running });
    const onNotice = (notice: LiveNotice) => send('lifeguard', notice);
    const onConnected = (connected: boolean) => send('feed', { connected });
    state.feed.on('notice', onNotice);
    state.feed.on('connected', onConnected);
    state.metrics.liveClients.inc();
    const keepalive = setInterval(() => raw.write(': keepalive\n\n'), KEEPALIVE_SECONDS * 1000);
    request.raw.on('close', () => {
      clearInterval(keepalive);
      state.feed.off('notice', onNotice);
      state.feed.off('connected', onConnected);
      state.metrics.liveClients.dec();
    });
  });
}
