// The console process without a cloud and with its brokers unreachable: it starts, serves every page
// saying what it cannot see, answers /healthz and /metrics, names an invalid setting, never logs the
// operator token, and stops cleanly.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { ConfigError, createLogger } from '@lifeguard/runtime';
import { closedPort } from '@lifeguard/testing';
import { loadConsoleConfig, startConsole } from '../src/index.ts';

const TOKEN = 'never-in-a-log-line-0123456789';

class Lines extends Writable {
  text = '';
  override _write(chunk: Buffer, _encoding: BufferEncoding, done: () => void): void {
    this.text += chunk.toString('utf8');
    done();
  }
}

describe('the console with RabbitMQ, Redis and Nova out of reach', () => {
  it('serves every page saying what it cannot see and why, keeps /healthz green and /readyz red, and stops cleanly', async () => {
    const amqpPort = await closedPort();
    const redisPort = await closedPort();
    const lines = new Lines();
    const running = await startConsole({
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        LIFEGUARD_AMQP_URL: `amqp://guest:guest@127.0.0.1:${amqpPort}/`,
        LIFEGUARD_REDIS_URL: `redis://127.0.0.1:${redisPort}/0`,
        LIFEGUARD_HTTP_PORT: '0',
        LIFEGUARD_CONSOLE_READ_TIMEOUT_SECONDS: '2',
        LIFEGUARD_CONSOLE_OPERATOR_TOKEN: TOKEN,
        OS_CLIENT_CONFIG_FILE: '/nonexistent/clouds.yaml',
        INSTANCEHA_CONFIG_PATH: '/nonexistent/config.yaml',
      },
      logger: createLogger({ service: 'lifeguard-console', level: 'debug', destination: lines }),
    });
    try {
      assert.match(running.url, /^http:\/\/127\.0\.0\.1:\d+\/$/, 'bound to 127.0.0.1 by default');
      const page = async (path: string) => {
        const response = await fetch(new URL(path, running.url));
        return { status: response.status, text: await response.text() };
      };
      const fleet = await page('/');
      assert.equal(fleet.status, 200);
      assert.match(fleet.text, /cannot see the compute hosts: Nova — .*OS_CLIENT_CONFIG_FILE/);
      assert.match(fleet.text, /cannot see the open incidents: Redis — /);
      assert.match(fleet.text, /cannot see the node monitor leader: Redis — /);
      const incidents = await page('/incidents');
      assert.match(incidents.text, /cannot see the incidents: Redis — /);
      const queues = await page('/queues');
      assert.match(queues.text, /cannot see the dead-letter queue: RabbitMQ — /);
      const provisioning = await page('/provisioning');
      assert.match(provisioning.text, /cannot see the provisioning records: Redis — /);
      assert.match(fleet.text, /<link rel="icon" href="\/static\/favicon.svg"/, 'every page names its icon');
      const icon = await fetch(new URL('/favicon.ico', running.url));
      assert.equal(icon.status, 200, 'the conventional icon path leads to the icon, not a 404');
      assert.equal(icon.headers.get('content-type'), 'image/svg+xml');
      assert.match(await icon.text(), /^<svg [^>]*><title>lifeguard<\/title>/);

      assert.equal((await page('/healthz')).status, 200, 'alive: the console runs without its brokers');
      const stream = await fetch(new URL('/events', running.url));
      const first = await stream.body!.pipeThrough(new TextDecoderStream()).getReader().read();
      assert.equal(
        first.value,
        'event: feed\ndata: {"connected":false}\n\n',
        'the live stream says it is not fed',
      );
      await stream.body?.cancel().catch(() => undefined);
      const ready = await page('/readyz');
      assert.equal(ready.status, 503);
      assert.match(ready.text, /"rabbitmq":"not following the events exchange"/);
      const metrics = await page('/metrics');
      assert.match(metrics.text, /lifeguard_console_event_feed_connected\{service="lifeguard-console"\} 0/);
      assert.match(metrics.text, /process_cpu_seconds_total/);

      const write = await fetch(new URL('/actions/confirm-fenced', running.url), {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}x` },
        body: new URLSearchParams({ host: 'compute-01', operator: 'eve', token: TOKEN }),
      });
      assert.equal(write.status, 401, 'the bearer header is read first, and it is wrong');
    } finally {
      await running.stop();
    }
    assert.ok(lines.text.length > 0, 'the console logged');
    assert.doesNotMatch(lines.text, new RegExp(TOKEN), 'the operator token is in no log line');
    assert.match(lines.text, /cannot follow the events exchange; trying again in 5 s/);
    await assert.rejects(fetch(running.url), 'no longer listening after stop()');
  });
});

describe('console settings', () => {
  it('name the invalid key and never show the token', () => {
    assert.throws(
      () =>
        loadConsoleConfig({
          LIFEGUARD_CONSOLE_OPERATOR_TOKEN: 'short-secret',
          LIFEGUARD_CONSOLE_REFRESH_SECONDS: 'often',
        }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.match(
          error.message,
          /LIFEGUARD_CONSOLE_OPERATOR_TOKEN \(environment\): must be at least 16 characters/,
        );
        assert.match(error.message, /LIFEGUARD_CONSOLE_REFRESH_SECONDS/);
        assert.doesNotMatch(error.message, /short-secret/);
        return true;
      },
    );
  });

  it('bind to 127.0.0.1:9430 and are read-only by default', () => {
    const config = loadConsoleConfig({});
    assert.equal(config.LIFEGUARD_HTTP_HOST, '127.0.0.1');
    assert.equal(config.LIFEGUARD_HTTP_PORT, 9430);
    assert.equal(config.LIFEGUARD_CONSOLE_OPERATOR_TOKEN, undefined);
  });
});
