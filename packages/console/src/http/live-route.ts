import type { FastifyInstance } from 'fastify';
import type { ConsoleState } from '../console-state.ts';
import type { LiveNotice } from '../live/event-feed.ts';

/** Seconds between looks at the feed's state (a `feed` event when it changed, else a keep-alive comment). */
export const FEED_CHECK_SECONDS = 5;

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
    // Every few seconds: the feed's state (it changes when RabbitMQ goes away and comes back), which
    // also keeps an idle stream open through proxies.
    let connected = state.feed.running;
    const keepalive = setInterval(() => {
      if (state.feed.running !== connected) {
        connected = state.feed.running;
        send('feed', { connected });
      } else raw.write(': keepalive\n\n');
    }, FEED_CHECK_SECONDS * 1000);
    request.raw.on('close', () => {
      clearInterval(keepalive);
      state.feed.off('notice', onNotice);
      state.feed.off('connected', onConnected);
      state.metrics.liveClients.dec();
    });
  });
}
