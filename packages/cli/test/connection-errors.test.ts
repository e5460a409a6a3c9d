import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { closedPort, createTestVhost, REDIS_URL, type TestVhost } from '@lifeguard/testing';
import { lifeguard, lifeguardProcess } from './support/cli-harness.ts';

/** REDIS_URL on another database (`/99`, `/abc`). */
function redisUrlWithPath(pathname: string): string {
  const url = new URL(REDIS_URL);
  url.pathname = pathname;
  return url.toString();
}

describe('lifeguard: a broker that cannot be reached, or that refuses', () => {
  let vhost: TestVhost;
  before(async () => {
    vhost = await createTestVhost('cli-refusal');
  });
  after(() => vhost.delete());

  it("a Redis database that does not exist (/99): stops naming LIFEGUARD_REDIS_URL and Redis's answer, never reads database 0", async () => {
    const run = await lifeguard(['incidents'], { LIFEGUARD_REDIS_URL: redisUrlWithPath('/99') });
    assert.equal(run.code, 1);
    assert.equal(run.stdout, '', 'no incidents of database 0 listed');
    assert.match(
      run.stderr,
      /^lifeguard: Redis at redis:\/\/127\.0\.0\.1:6379\/99 refused database 99 in LIFEGUARD_REDIS_URL: SELECT 99: ERR DB index is out of range\. Use a database this Redis has/,
    );
  });

  it('as a process, /99 and /abc exit 1 with the reason on standard error, no stack trace', async () => {
    const [missing, invalid] = await Promise.all([
      lifeguardProcess(['incidents'], { LIFEGUARD_REDIS_URL: redisUrlWithPath('/99') }),
      lifeguardProcess(['incidents'], { LIFEGUARD_REDIS_URL: redisUrlWithPath('/abc') }),
    ]);
    assert.equal(missing.code, 1);
    assert.equal(missing.stdout, '');
    assert.match(
      missing.stderr,
      /refused database 99 in LIFEGUARD_REDIS_URL: SELECT 99: ERR DB index is out of range/,
    );
    assert.equal(invalid.code, 1);
    assert.equal(invalid.stdout, '');
    assert.match(
      invalid.stderr,
      /^lifeguard: invalid configuration: LIFEGUARD_REDIS_URL \(environment\): the database \(the path after host:port\) must be a whole number from 0/,
    );
    assert.doesNotMatch(missing.stderr + invalid.stderr, /ReplyError|at parseError/);
  });

  it('a closed Redis port: the address and the real cause (connect ECONNREFUSED), with how to start Redis', async () => {
    const port = await closedPort();
    const run = await lifeguard(['incidents'], { LIFEGUARD_REDIS_URL: `redis://127.0.0.1:${port}/0` });
    assert.equal(run.code, 1);
    assert.match(
      run.stderr,
      new RegExp(
        `^lifeguard: Redis is not reachable at redis://127\\.0\\.0\\.1:${port}/0: connect ECONNREFUSED 127\\.0\\.0\\.1:${port}\\. Start it`,
      ),
    );
    assert.doesNotMatch(run.stderr, /Connection is closed|\.\./);
  });

  it('a wrong RabbitMQ password: the credentials in LIFEGUARD_AMQP_URL were refused (masked), no "start it"', async () => {
    const url = new URL(vhost.url);
    url.password = 'wrong-secret';
    const run = await lifeguard(['dlq', 'list'], { LIFEGUARD_AMQP_URL: url.toString() });
    assert.equal(run.code, 1);
    assert.match(
      run.stderr,
      /^lifeguard: RabbitMQ at amqp:\/\/guest:\*\*\*@127\.0\.0\.1:5672\/t-cli-refusal-\w+ refused the user name "guest" and password in LIFEGUARD_AMQP_URL: ACCESS_REFUSED/,
    );
    assert.doesNotMatch(run.stderr, /not reachable|Start it|wrong-secret/);
  });

  it("a RabbitMQ vhost that does not exist: RabbitMQ's reason and the rabbitmqctl commands that create it", async () => {
    const url = new URL(vhost.url);
    url.pathname = '/lifeguard-cli-no-such-vhost';
    const run = await lifeguard(['dlq', 'list'], { LIFEGUARD_AMQP_URL: url.toString() });
    assert.equal(run.code, 1);
    assert.match(
      run.stderr,
      /refused the virtual host "lifeguard-cli-no-such-vhost" in LIFEGUARD_AMQP_URL: NOT_ALLOWED - vhost lifeguard-cli-no-such-vhost not found\. It does not exist: create it with rabbitmqctl add_vhost lifeguard-cli-no-such-vhost && rabbitmqctl set_permissions -p lifeguard-cli-no-such-vhost guest/,
    );
    assert.doesNotMatch(run.stderr, /not reachable|Start it|ConnectionOpenOk/);
  });
});
