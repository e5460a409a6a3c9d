// The console's live stream (GET /events) is fed by the events exchange and comes back by itself
// after its RabbitMQ connection is closed.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createEvent, EVENTS_EXCHANGE } from '@lifeguard/contracts';
import { AmqpClient, createLogger, eventMessageOptions } from '@lifeguard/runtime';
import { closeConnectionByName, createTestVhost, type TestVhost, waitFor } from '@lifeguard/testing';
import { type RunningConsole, startConsole } from '../src/index.ts';

/** Reads `GET /events` and keeps each `event:` with its data. */
async function follow(url: string, signal: AbortSignal): Promise<Array<{ event: string; data: unknown }>> {
  const seen: Array<{ event: string; data: unknown }> = [];
  const response = await fetch(new URL('/events', url), { signal });
  assert.equal(response.headers.get('content-type'), 'text/event-stream; charset=utf-8');
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  void (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buffer += value;
        let end = buffer.indexOf('\n\n');
        while (end >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (event && data) seen.push({ event, data: JSON.parse(data) });
          end = buffer.indexOf('\n\n');
        }
      }
    } catch {
      // aborted
    }
  })();
  return seen;
}

describe('the live stream', { timeout: 120_000 }, () => {
  let vhost: TestVhost;
  let running: RunningConsole;
  let publisher: AmqpClient;
  const abort = new AbortController();

  before(async () => {
    vhost = await createTestVhost('console-live');
    running = await startConsole({
      env: {
        PATH: process.env.PATH,
        LIFEGUARD_AMQP_URL: vhost.url,
        LIFEGUARD_HTTP_PORT: '0',
        LIFEGUARD_INSTANCE_NAME: `console-live-${vhost.name}`,
        OS_CLIENT_CONFIG_FILE: '/nonexistent/clouds.yaml',
      },
      logger: createLogger({ service: 'lifeguard-console', level: 'silent' }),
    });
    publisher = await AmqpClient.connect({
      url: vhost.url,
      connectionName: 'console-live-publisher',
      service: 'test',
      logger: createLogger({ service: 'test', level: 'silent' }),
    });
  });

  after(async () => {
    abort.abort();
    await publisher?.close();
    await running?.stop();
    await vhost?.delete();
  });

  const publish = (host: string) => {
    const event = createEvent(
      'host.reenabled',
      { host, serviceId: 'svc-1', incidentId: null },
      { service: 'test', instance: 'test' },
    );
    return publisher.publish(
      EVENTS_EXCHANGE,
      event.type,
      Buffer.from(JSON.stringify(event)),
      eventMessageOptions(event),
    );
  };

  it('passes each event on, and follows the events exchange again after its connection is closed', async () => {
    await waitFor('the console follows the events exchange', () => running.feed.running, 30_000);
    const seen = await follow(running.url, abort.signal);
    await waitFor('the first feed state', () => seen.find((each) => each.event === 'feed'));
    assert.deepEqual(seen[0], { event: 'feed', data: { connected: true } });
    await publish('compute-07');
    const notice = await waitFor('the event on the stream', () =>
      seen.find((each) => each.event === 'lifeguard'),
    );
    assert.deepEqual(
      { ...(notice.data as Record<string, unknown>), occurredAt: undefined },
      { type: 'host.reenabled', host: 'compute-07', incidentId: null, occurredAt: undefined },
    );

    assert.equal(await closeConnectionByName(`lifeguard-console:console-live-${vhost.name}`), 1);
    await waitFor('the console to follow the events exchange again', () => running.feed.running, 30_000);
    // Still following a few seconds later (no stale restart replaced the consumer).
    await new Promise((resolve) => setTimeout(resolve, 2500));
    assert.equal(running.feed.running, true);
    assert.equal((await fetch(new URL('/readyz', running.url))).status, 200);
    await publish('compute-08');
    await waitFor('the event after the reconnect', () =>
      seen.find(
        (each) => each.event === 'lifeguard' && (each.data as { host: string }).host === 'compute-08',
      ),
    );
  });
});
