import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createOpenStackClients, NovaApiError, type NovaClient } from '@lifeguard/openstack';
import { waitFor } from '@lifeguard/testing';
import { type CloudSim, startCloudSim } from '../src/index.ts';

let sim: CloudSim;
let nova: NovaClient;

async function control(method: string, path: string, body?: unknown) {
  const response = await fetch(`${sim.urls.control}${path}`, {
    method,
    ...(body === undefined
      ? {}
      : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as unknown) : null };
}

async function forceDown(host: string) {
  const [service] = await nova.listServices({ binary: 'nova-compute', host });
  await nova.updateService(service!.id, { forced_down: true });
}

before(async () => {
  sim = await startCloudSim({
    hosts: 4,
    model: {
      reportIntervalSeconds: 1,
      serviceDownTimeSeconds: 3,
      evacuation: { acceptMilliseconds: 0, rebuildMilliseconds: 200 },
    },
  });
  nova = createOpenStackClients({ config: configFor(sim) }).compute;
});
after(() => sim.close());

function configFor(running: CloudSim) {
  return {
    name: 'cloud-sim',
    source: 'test',
    authType: 'admin_token' as const,
    auth: { token: 'admin:admin' },
    regionName: null,
    interface: 'public',
    endpointOverrides: { compute: running.urls.compute, image: running.urls.image },
    apiTimeoutSeconds: null,
  };
}

describe('cloud-sim evacuations and fault injection', () => {
  it('rebuilds an evacuated server: REBUILD, then ACTIVE elsewhere; migration accepted, pre-migrating, done', async () => {
    const server = sim.addServer({ host: 'compute1' });
    sim.killHost('compute1');
    await forceDown('compute1');
    const seen = new Set<string>();
    const statuses = new Set<string>();
    await nova.evacuate(server.id);
    await waitFor(
      'the server ACTIVE on another host',
      async () => {
        const current = await nova.getServer(server.id);
        statuses.add(current.status);
        const [migration] = await nova.listMigrations({ instanceUuid: server.id });
        if (migration) seen.add(migration.status);
        return (
          current.status === 'ACTIVE' &&
          current['OS-EXT-SRV-ATTR:host'] !== 'compute1' &&
          migration?.status === 'done'
        );
      },
      5000,
      10,
    );
    assert.ok(statuses.has('REBUILD'));
    assert.ok(seen.has('pre-migrating') || seen.has('accepted'));
    assert.equal(sim.evacuateCalls(server.id), 1);
  });

  it('keeps a stopped server stopped after evacuation (before 2.95)', async () => {
    const server = sim.addServer({ host: 'compute2', vmState: 'stopped' });
    sim.killHost('compute2');
    await forceDown('compute2');
    await nova.evacuate(server.id);
    await waitFor(
      'evacuation done',
      async () => (await nova.listMigrations({ instanceUuid: server.id }))[0]?.status === 'done',
      5000,
      20,
    );
    const moved = await nova.getServer(server.id);
    assert.equal(moved.status, 'SHUTOFF');
    assert.notEqual(moved['OS-EXT-SRV-ATTR:host'], 'compute2');
  });

  it('fails chosen evacuations: "failed" (rebuild) and "error" (no valid host), server ERROR', async () => {
    const rebuildFails = sim.addServer({ host: 'compute1' });
    const noHost = sim.addServer({ host: 'compute1' });
    const { status } = await control('POST', '/evacuation-failures', {
      servers: [rebuildFails.id],
      mode: 'failed',
      times: 1,
    });
    assert.equal(status, 204);
    sim.failEvacuations([noHost.id], 'error');
    await nova.evacuate(rebuildFails.id);
    await nova.evacuate(noHost.id);
    await waitFor(
      'both migrations to end',
      async () => {
        const [first] = await nova.listMigrations({ instanceUuid: rebuildFails.id });
        const [second] = await nova.listMigrations({ instanceUuid: noHost.id });
        return first?.status === 'failed' && second?.status === 'error';
      },
      5000,
      20,
    );
    assert.equal((await nova.getServer(rebuildFails.id)).status, 'ERROR');
    assert.equal((await nova.getServer(noHost.id)).status, 'ERROR');
    await nova.evacuate(rebuildFails.id);
    await waitFor(
      'the retried evacuation to succeed',
      async () => (await nova.getServer(rebuildFails.id)).status === 'ACTIVE',
      5000,
      20,
    );
    assert.equal(sim.evacuateCalls(rebuildFails.id), 2);
    const calls = (await control('GET', '/evacuate-calls')).body as { calls: Record<string, number> };
    assert.equal(calls.calls[rebuildFails.id], 2);
  });

  it('ends in error when no other host is enabled and up', async () => {
    const lonely = await startCloudSim({
      hosts: 2,
      redfishPort: false,
      model: { evacuation: { acceptMilliseconds: 0, rebuildMilliseconds: 50 } },
    });
    try {
      const client = createOpenStackClients({ config: configFor(lonely) }).compute;
      const server = lonely.addServer({ host: 'compute1' });
      const [other] = await client.listServices({ host: 'compute2' });
      await client.updateService(other!.id, { status: 'disabled', disabled_reason: 'maintenance' });
      lonely.killHost('compute1');
      const [source] = await client.listServices({ host: 'compute1' });
      await client.updateService(source!.id, { forced_down: true });
      await client.evacuate(server.id);
      await waitFor(
        'migration error',
        async () => (await client.listMigrations({ instanceUuid: server.id }))[0]?.status === 'error',
        5000,
        20,
      );
      const failed = await client.getServer(server.id);
      assert.equal(failed.status, 'ERROR');
      assert.equal(failed['OS-EXT-SRV-ATTR:host'], 'compute1');
    } finally {
      await lonely.close();
    }
  });

  it('answers evacuate only after the configured accept latency', async () => {
    const server = sim.addServer({ host: 'compute3' });
    sim.killHost('compute3');
    await forceDown('compute3');
    sim.setEvacuationTiming({ acceptMilliseconds: 300 });
    const started = performance.now();
    await nova.evacuate(server.id);
    const elapsed = performance.now() - started;
    sim.setEvacuationTiming({ acceptMilliseconds: 0 });
    assert.ok(elapsed >= 290, `evacuate answered after ${elapsed} ms`);
  });

  it('slows every API answer down and replaces answers with injected ones (a 500 HTML page)', async () => {
    assert.equal(
      (await control('PUT', '/api-delay', { milliseconds: 200, pathPrefix: '/compute/v2.1/os-services' }))
        .status,
      204,
    );
    const started = performance.now();
    await nova.listServices();
    assert.ok(performance.now() - started >= 190);
    await control('PUT', '/api-delay', { milliseconds: 0 });
    await control('POST', '/inject-response', {
      status: 500,
      contentType: 'text/html',
      body: '<html><body><h1>500 Internal Server Error</h1>Proxy failure</body></html>',
      pathPrefix: '/compute/v2.1/os-aggregates',
    });
    await assert.rejects(nova.listAggregates(), (error: unknown) => {
      assert.ok(error instanceof NovaApiError);
      assert.equal(error.status, 500);
      assert.equal(error.apiMessage, '500 Internal Server Error: Proxy failure');
      return true;
    });
    assert.deepEqual(await nova.listAggregates(), []);
  });

  it('records server external events with Nova codes (200, 404 unknown, 422 no host, 400 missing tag)', async () => {
    const server = sim.addServer({ host: 'compute4' });
    const unhosted = sim.addServer({ host: 'compute4' });
    sim.model.servers.setHost(unhosted, null);
    const result = await nova.createServerExternalEvents([
      { name: 'network-vif-plugged', server_uuid: server.id, tag: 'port-1' },
      { name: 'network-vif-plugged', server_uuid: '00000000-0000-4000-8000-000000000000' },
      { name: 'network-vif-plugged', server_uuid: unhosted.id },
      { name: 'power-update', server_uuid: server.id },
    ]);
    assert.equal(result.status, 207);
    assert.deepEqual(
      result.events.map((event) => event.code),
      [200, 404, 422, 400],
    );
    const recorded = (await control('GET', '/external-events')).body as {
      events: Array<{ server_uuid: string; tag: string | null; code: number }>;
    };
    assert.ok(
      recorded.events.some(
        (event) => event.server_uuid === server.id && event.tag === 'port-1' && event.code === 200,
      ),
    );
  });

  it('partitions hosts through the control API; they go down after service_down_time and come back when healed', async () => {
    assert.equal((await control('POST', '/partition', { hosts: ['compute4'] })).status, 204);
    await waitFor(
      'compute4 down',
      async () => (await nova.listServices({ host: 'compute4' }))[0]?.state === 'down',
      8000,
      100,
    );
    const state = (await control('GET', '/state')).body as {
      hosts: Array<{ host: string; partitioned: boolean; powerState: string }>;
    };
    const entry = state.hosts.find((host) => host.host === 'compute4');
    assert.equal(entry?.partitioned, true);
    assert.equal(entry?.powerState, 'On');
    assert.equal((await control('POST', '/heal', {})).status, 204);
    assert.equal((await nova.listServices({ host: 'compute4' }))[0]?.state, 'up');
  });

  it('refuses bad control requests with 400 and unknown hosts with 404', async () => {
    assert.equal((await control('POST', '/partition', { hosts: [] })).status, 400);
    assert.equal((await control('POST', '/hosts/nope/kill')).status, 404);
    assert.equal((await control('PUT', '/api-delay', { milliseconds: -1 })).status, 400);
  });

  it('checks every named host and flavor before changing any: an unknown one gives 404 and nothing changes', async () => {
    const partitioned = () =>
      sim
        .hostStates()
        .filter((host) => host.partitioned)
        .map((host) => host.host);
    assert.deepEqual(await control('POST', '/heal', { hosts: ['compute99'] }), {
      status: 404,
      body: { error: 'unknown hosts: compute99' },
    });
    assert.equal((await control('POST', '/partition', { hosts: ['compute2'] })).status, 204);
    assert.deepEqual(await control('POST', '/heal', { hosts: ['compute2', 'compute99'] }), {
      status: 404,
      body: { error: 'unknown hosts: compute99' },
    });
    assert.deepEqual(partitioned(), ['compute2'], 'compute2 stays partitioned');
    assert.deepEqual(await control('POST', '/partition', { hosts: ['compute3', 'compute98'] }), {
      status: 404,
      body: { error: 'unknown hosts: compute98' },
    });
    assert.deepEqual(partitioned(), ['compute2'], 'compute3 is not partitioned');
    for (const path of ['kill', 'revive', 'power-off', 'power-on']) {
      assert.deepEqual(await control('POST', `/hosts/compute99/${path}`), {
        status: 404,
        body: { error: 'no host named compute99' },
      });
    }
    assert.equal((await control('PUT', '/hosts/compute99/bmc', {})).status, 404);
    assert.equal((await control('GET', '/hosts/compute99/bmc')).status, 404);
    assert.equal((await control('POST', '/servers', { host: 'compute99' })).status, 404);
    const serversBefore = sim.model.servers.size;
    assert.deepEqual(await control('POST', '/servers', { host: 'compute1', flavorId: '99', count: 3 }), {
      status: 404,
      body: { error: 'no flavor with id 99 (flavors: see GET /flavors)' },
    });
    assert.equal(sim.model.servers.size, serversBefore, 'no server added with an unknown flavor');
    assert.throws(() => sim.addServer({ host: 'compute1', flavorId: '99' }), /no flavor with id 99/);
    assert.throws(() => sim.heal(['compute2', 'compute99']), /unknown hosts: compute99/);
    assert.throws(() => sim.partition(['compute3', 'compute99']), /unknown hosts: compute99/);
    assert.deepEqual(partitioned(), ['compute2'], 'the programmatic calls check first as well');
    assert.equal((await control('POST', '/heal', { hosts: ['compute2'] })).status, 204);
    assert.deepEqual(partitioned(), []);
  });

  it("answers 404 for removing an extra spec the flavor does not have, also one named as an object's inherited property", async () => {
    sim.model.addFlavor({ id: 'spec-test', name: 'spec-test', extraSpecs: { 'hw:cpu_policy': 'dedicated' } });
    const remove = (key: string) =>
      fetch(`${sim.urls.compute}/flavors/spec-test/os-extra_specs/${key}`, {
        method: 'DELETE',
        headers: { 'x-auth-token': 'admin:admin' },
      }).then((response) => response.status);
    for (const key of ['hw:missing', 'toString', 'constructor', 'hasOwnProperty'])
      assert.equal(await remove(key), 404, key);
    assert.equal(await remove('hw:cpu_policy'), 200);
    assert.deepEqual(sim.model.flavors.get('spec-test')!.extraSpecs, {});
  });

  it('answers microversion errors as Nova does (400 malformed, 406 out of range)', async () => {
    const ask = (version: string) =>
      fetch(`${sim.urls.compute}/os-services`, {
        headers: { 'x-auth-token': 'admin:admin', 'openstack-api-version': `compute ${version}` },
      });
    const malformed = await ask('2.x');
    assert.equal(malformed.status, 400);
    assert.match(await malformed.text(), /API Version String 2\.x is of invalid format/);
    const tooNew = await ask('2.200');
    assert.equal(tooNew.status, 406);
    const latest = await ask('latest');
    assert.equal(latest.headers.get('openstack-api-version'), 'compute 2.93');
  });
});
