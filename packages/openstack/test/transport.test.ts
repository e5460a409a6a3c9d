import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { createLogger } from '@lifeguard/runtime';
import { CapturedLines, waitFor } from '@lifeguard/testing';
import {
  EndpointUnreachableError,
  MicroversionNotSupportedError,
  NovaApiError,
  NovaClient,
  StaticTokenAuth,
  UnexpectedResponseError,
  withRequestSignal,
} from '../src/index.ts';
import {
  closedPort,
  type ScriptedAnswer,
  ScriptedServer,
  versionDocument,
} from './support/scripted-server.ts';

const SECRET_TOKEN = 'tok-9f8e7d6c5b4a-secret';
let server: ScriptedServer | null = null;
afterEach(async () => {
  await server?.stop();
  server = null;
});

/** A NovaClient against a scripted server whose first request is the version document. */
async function novaAgainst(
  script: (request: { method: string; url: string; body: string }, index: number) => ScriptedAnswer,
  options: { lines?: CapturedLines; maximum?: string; retryDelayMilliseconds?: number } = {},
) {
  server = new ScriptedServer((request, index) =>
    request.url === '/v2.1' ? versionDocument(options.maximum) : script(request, index),
  );
  const url = await server.start();
  const logger = options.lines
    ? createLogger({ service: 'test', level: 'debug', destination: options.lines })
    : undefined;
  return new NovaClient({
    auth: new StaticTokenAuth('admin_token', SECRET_TOKEN, { compute: `${url}/v2.1` }),
    retry: {
      attempts: 3,
      baseDelayMilliseconds: options.retryDelayMilliseconds ?? 10,
      maxDelayMilliseconds: options.retryDelayMilliseconds ?? 20,
    },
    timeoutMilliseconds: 2_000,
    ...(logger ? { logger } : {}),
  });
}

const calls = () => server!.requests.filter((request) => request.url !== '/v2.1');

describe('transport: bad answers, retries and secrets', () => {
  it('gives a clear EndpointUnreachableError after bounded retries when nothing listens', async () => {
    const port = await closedPort();
    const nova = new NovaClient({
      auth: new StaticTokenAuth('admin_token', SECRET_TOKEN, { compute: `http://127.0.0.1:${port}/v2.1` }),
      retry: { attempts: 3, baseDelayMilliseconds: 10, maxDelayMilliseconds: 20 },
    });
    const error = await nova.listServices().then(
      () => assert.fail('expected EndpointUnreachableError'),
      (caught: unknown) => caught,
    );
    assert.ok(error instanceof EndpointUnreachableError, String(error));
    assert.equal(error.attempts, 3);
    assert.equal(error.url, `http://127.0.0.1:${port}/v2.1`);
    assert.match(
      error.message,
      new RegExp(
        `^Nova is not reachable at http://127\\.0\\.0\\.1:${port}/v2\\.1 .*ECONNREFUSED.*gave up after 3 attempts`,
      ),
    );
  });

  it('gives up on an answer slower than the timeout, after bounded retries for a GET', async () => {
    server = new ScriptedServer((request) =>
      request.url === '/v2.1'
        ? versionDocument()
        : { status: 200, body: '{"services": []}', delayMilliseconds: 1_000 },
    );
    const url = await server.start();
    const nova = new NovaClient({
      auth: new StaticTokenAuth('admin_token', SECRET_TOKEN, { compute: `${url}/v2.1` }),
      retry: { attempts: 2, baseDelayMilliseconds: 10, maxDelayMilliseconds: 20 },
      timeoutMilliseconds: 150,
    });
    const error = await nova.listServices().then(
      () => assert.fail('expected EndpointUnreachableError'),
      (caught: unknown) => caught,
    );
    assert.ok(error instanceof EndpointUnreachableError, String(error));
    assert.equal(error.attempts, 2);
    assert.match(error.message, /aborted due to timeout/);
    assert.equal(calls().length, 2);
  });

  it('turns a 500 with an HTML body into a NovaApiError with the page text, without retrying', async () => {
    const nova = await novaAgainst(() => ({
      status: 500,
      headers: {
        'content-type': 'text/html',
        'x-openstack-request-id': 'req-00000000-0000-0000-0000-000000000500',
      },
      body: '<html><head><title>500 Internal Server Error</title></head><body><h1>Internal Server Error</h1><p>The server encountered an unexpected condition.</p></body></html>',
    }));
    const error = await nova.listServices().then(
      () => assert.fail('expected NovaApiError'),
      (caught: unknown) => caught,
    );
    assert.ok(error instanceof NovaApiError, String(error));
    assert.equal(error.status, 500);
    assert.equal(error.apiMessage, 'Internal Server Error: The server encountered an unexpected condition.');
    assert.equal(error.requestId, 'req-00000000-0000-0000-0000-000000000500');
    assert.equal(calls().length, 1);
  });

  it('retries GET on 503 and 502 and succeeds', async () => {
    const nova = await novaAgainst((_request, index) =>
      index <= 2 ? { status: index === 1 ? 503 : 502, body: '' } : { status: 200, body: '{"services": []}' },
    );
    assert.deepEqual(await nova.listServices(), []);
    assert.equal(calls().length, 3);
  });

  it('never re-sends an evacuate after a 502 or 504 (it may have reached Nova)', async () => {
    const nova = await novaAgainst(() => ({ status: 504, body: 'gateway timeout' }));
    await assert.rejects(nova.evacuate('6b0a5a6e-3a43-4b71-a3a7-1b6b0b8d0f10'), (error: unknown) => {
      assert.ok(error instanceof NovaApiError);
      assert.equal(error.status, 504);
      return true;
    });
    assert.equal(calls().length, 1);
  });

  it('retries a 409 for a task in progress, not a 409 for a vm_state', async () => {
    const transient = await novaAgainst((_request, index) =>
      index === 1
        ? {
            status: 409,
            body: '{"conflictingRequest": {"code": 409, "message": "Cannot \'stop\' instance x while it is in task_state rebuilding"}}',
          }
        : { status: 202, body: '' },
    );
    await transient.stopServer('x');
    assert.equal(calls().length, 2);
    await server!.stop();
    const final = await novaAgainst(() => ({
      status: 409,
      body: '{"conflictingRequest": {"code": 409, "message": "Cannot \'stop\' instance x while it is in vm_state stopped"}}',
    }));
    await assert.rejects(final.stopServer('x'), /vm_state stopped/);
    assert.equal(calls().length, 1);
  });

  it('rejects a 2xx body that is not JSON or has the wrong shape with UnexpectedResponseError', async () => {
    const html = await novaAgainst(() => ({ status: 200, body: '<html>proxy login page</html>' }));
    await assert.rejects(
      html.listServices(),
      (error: unknown) => error instanceof UnexpectedResponseError && /not JSON/.test(error.message),
    );
    await server!.stop();
    const shape = await novaAgainst(() => ({
      status: 200,
      body: '{"aggregates": [{"id": 1, "hosts": []}]}',
    }));
    await assert.rejects(shape.listAggregates(), (error: unknown) => {
      assert.ok(error instanceof UnexpectedResponseError);
      assert.match(error.message, /aggregates\.0\.name/);
      return true;
    });
    await server!.stop();
    const notAList = await novaAgainst(() => ({ status: 200, body: '{"services": {"id": "x"}}' }));
    await assert.rejects(notAList.listServices(), UnexpectedResponseError);
  });

  it('asks again when a GET answer is cut mid-body, and never repeats a POST whose answer was cut', async () => {
    const lines = new CapturedLines();
    const truncated = '{"services": [{"id": "a", "binary": "nova-compute", "ho';
    const flaky = await novaAgainst(
      () =>
        calls().length < 3 ? { status: 200, body: truncated } : { status: 200, body: '{"services": []}' },
      { lines },
    );
    assert.deepEqual(await flaky.listServices(), []);
    assert.equal(calls().length, 3, 'two cut answers, then a whole one');
    assert.equal(
      lines.records().filter((record) => record.msg === 'OpenStack answer unreadable; retrying').length,
      2,
    );
    await server!.stop();
    const cutEvacuate = await novaAgainst(() => ({ status: 200, body: '{"adminPass": "x' }));
    await assert.rejects(
      cutEvacuate.evacuate('server-1'),
      (error: unknown) => error instanceof UnexpectedResponseError && /not JSON/.test(error.message),
    );
    assert.equal(
      calls().filter((request) => request.method === 'POST').length,
      1,
      'the evacuate may have been accepted: it is not sent twice',
    );
  });

  it('leaves out a service record that does not fit (a 2.69 down-cell record without id) and keeps the others', async () => {
    const lines = new CapturedLines();
    const nova = await novaAgainst(
      () => ({
        status: 200,
        body: JSON.stringify({
          services: [
            { binary: 'nova-compute', host: 'cell2-compute-0', status: 'UNKNOWN' },
            { id: 'x', binary: 'nova-compute', status: 'enabled' },
            {
              id: 'b7e1',
              binary: 'nova-compute',
              host: 'compute-1',
              status: 'enabled',
              state: 'up',
              forced_down: false,
              updated_at: '2026-11-30T08:00:00.000000',
            },
            { id: 'c8f2', binary: 'nova-compute', host: 'compute-2', status: 'enabled', forced_down: 'no' },
          ],
        }),
      }),
      { lines },
    );
    assert.deepEqual(
      (await nova.listServices()).map((service) => service.host),
      ['compute-1'],
    );
    // each record left out is named with what does not fit, field by field
    const left = lines
      .records()
      .filter(
        (record) =>
          record.msg === 'GET /os-services: a service record that does not fit the schema was left out',
      )
      .map((record) => ({ host: record.host, problems: record.problems }));
    assert.deepEqual(left, [
      { host: 'cell2-compute-0', problems: ['id: Invalid input'] },
      { host: null, problems: ['host: Invalid input: expected string, received undefined'] },
      { host: 'compute-2', problems: ['forced_down: Invalid input: expected boolean, received string'] },
    ]);
  });

  it('gives the same services whether the listing is validated whole or record by record (number ids as text, extra fields kept)', async () => {
    const record = (id: string | number, host: string) => ({
      id,
      binary: 'nova-compute',
      host,
      zone: 'nova',
      status: 'enabled',
      state: 'up',
      forced_down: false,
      updated_at: '2026-11-30T08:00:00.000000',
      disabled_reason: null,
      uuid_of_a_later_microversion: 'kept',
    });
    const whole = [record('b7e1', 'compute-0'), record('c8f2', 'compute-1')];
    const mixed = [
      record(7, 'compute-0'),
      record('c8f2', 'compute-1'),
      { host: 'cell2-compute-0', status: 'UNKNOWN' },
    ];
    const nova = await novaAgainst((_request, index) => ({
      status: 200,
      body: JSON.stringify({ services: index === 1 ? whole : mixed }),
    }));
    assert.deepEqual(await nova.listServices(), whole);
    assert.deepEqual(await nova.listServices(), [{ ...record(7, 'compute-0'), id: '7' }, whole[1]]);
  });

  it('refuses Nova older than 2.53 with MicroversionNotSupportedError', async () => {
    const nova = await novaAgainst(() => ({ status: 200, body: '{"services": []}' }), { maximum: '2.38' });
    await assert.rejects(nova.listServices(), (error: unknown) => {
      assert.ok(error instanceof MicroversionNotSupportedError);
      assert.match(error.message, /supports microversions 2\.1 to 2\.38; lifeguard needs 2\.53 or later/);
      return true;
    });
  });

  it('uses the newest microversion between 2.53 and 2.73, and sends it in both headers', async () => {
    const nova = await novaAgainst(() => ({ status: 200, body: '{"services": []}' }), { maximum: '2.60' });
    await nova.listServices();
    assert.equal(await nova.microversion(), '2.60');
    assert.equal(calls()[0]?.headers['openstack-api-version'], 'compute 2.60');
    assert.equal(calls()[0]?.headers['x-openstack-nova-api-version'], '2.60');
  });

  it('locks without a reason below 2.73', async () => {
    const nova = await novaAgainst(() => ({ status: 202, body: '' }), { maximum: '2.60' });
    await nova.lockServer('x', 'ignored below 2.73');
    assert.equal(calls()[0]?.body, '{"lock":null}');
  });

  it('follows servers_links with the marker against its own endpoint', async () => {
    const nova = await novaAgainst((request) => {
      const marker = new URL(request.url, 'http://x').searchParams.get('marker');
      if (!marker)
        return {
          status: 200,
          body: JSON.stringify({
            servers: [{ id: 'a', name: 'a', status: 'ACTIVE' }],
            servers_links: [
              { rel: 'next', href: 'http://wrong-proxy-host:8774/v2.1/servers/detail?limit=1&marker=a' },
            ],
          }),
        };
      return { status: 200, body: JSON.stringify({ servers: [{ id: 'b', name: 'b', status: 'ACTIVE' }] }) };
    });
    const servers = await nova.listServers({ limit: 1 });
    assert.deepEqual(
      servers.map((each) => each.id),
      ['a', 'b'],
    );
    assert.match(calls()[1]?.url ?? '', /^\/v2\.1\/servers\/detail\?.*marker=a/);
  });

  it('never logs the token or puts it in errors, even when a server echoes it', async () => {
    const lines = new CapturedLines();
    const nova = await novaAgainst(
      (request, index) =>
        index === 1
          ? { status: 503, body: `{"message": "overloaded, token ${SECRET_TOKEN}"}` }
          : {
              status: 400,
              body: `{"badRequest": {"code": 400, "message": "bad token ${SECRET_TOKEN} in ${request.url}"}}`,
            },
      { lines },
    );
    const error = await nova.listServices().then(
      () => assert.fail('expected NovaApiError'),
      (caught: unknown) => caught as Error,
    );
    assert.equal(server!.requests[1]?.headers['x-auth-token'], SECRET_TOKEN);
    assert.ok(lines.lines.length >= 2, 'the retry and the calls were logged');
    assert.doesNotMatch(lines.text, new RegExp(SECRET_TOKEN));
    assert.doesNotMatch(error.message, new RegExp(SECRET_TOKEN));
    assert.match(error.message, /bad token \*\*\*/);
  });

  describe('a call inside withRequestSignal (the node monitor bounds each poll so)', () => {
    const cut = new Error('the poll ran past its deadline');

    it('cancels a hanging attempt when the signal aborts, and sends no retry', async () => {
      const nova = await novaAgainst(() => ({
        status: 200,
        body: '{"services": []}',
        delayMilliseconds: 60_000,
      }));
      const bound = new AbortController();
      const listing = withRequestSignal(bound.signal, () => nova.listServices());
      await waitFor('the listing reached Nova', () => calls().length === 1);
      bound.abort(cut);
      await assert.rejects(listing, (error) => error === cut);
      assert.equal(calls().length, 1, 'no second attempt');
    });

    it('stops waiting for a retry when the signal aborts during the back-off', async () => {
      const nova = await novaAgainst(() => ({ status: 503, body: '' }), { retryDelayMilliseconds: 60_000 });
      const bound = new AbortController();
      const listing = withRequestSignal(bound.signal, () => nova.listServices());
      await waitFor('the first attempt answered 503', () => calls().length === 1);
      bound.abort(cut);
      await assert.rejects(listing, (error) => error === cut);
      assert.equal(calls().length, 1, 'no second attempt');
    });

    it('leaves calls outside it as they were', async () => {
      const nova = await novaAgainst(() => ({ status: 200, body: '{"services": []}' }));
      const bound = new AbortController();
      bound.abort(cut);
      await assert.rejects(
        withRequestSignal(bound.signal, () => nova.listServices()),
        (error) => error === cut,
      );
      assert.deepEqual(await nova.listServices(), []);
    });
  });
});
