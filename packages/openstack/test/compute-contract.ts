import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { sleep, waitFor } from '@lifeguard/testing';
import { GlanceApiError, NovaApiError, NovaClient, type Server } from '../src/index.ts';
import { type ContractTarget, expectStatus } from './support/contract-target.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const REQUEST_ID = /^req-[0-9a-f-]{36}$/;

/** Rejects with a NovaApiError of this status; returns it for more assertions. */
async function novaError(promise: Promise<unknown>, status: number): Promise<NovaApiError> {
  const error = await promise.then(
    () => assert.fail(`expected NovaApiError ${status}`),
    (caught: unknown) => caught,
  );
  assert.ok(error instanceof NovaApiError, `expected NovaApiError, got ${String(error)}`);
  assert.equal(error.status, status, error.message);
  assert.match(error.requestId ?? '', REQUEST_ID);
  return error;
}

const hostOf = (server: Server) => server['OS-EXT-SRV-ATTR:host'];

/**
 * The contract of NovaClient and GlanceClient, run unchanged against real Nova and against cloud-sim:
 * every assertion holds for both, so where cloud-sim and Nova differ, cloud-sim is wrong.
 * `createTarget` is called once; the suite boots its own servers and cleans up after itself
 * (servers deleted, the killed compute started, forced_down unset, services enabled).
 */
export function computeContract(createTarget: () => Promise<ContractTarget>): void {
  describe('compute and image contract', { timeout: 180_000 }, () => {
    let target: ContractTarget;
    let victim: string;
    let survivor: string;
    const servers: Record<string, string> = {};
    const createdImages: string[] = [];
    let createdFlavor: string | null = null;
    let createdAggregate: number | null = null;

    async function boot(name: string, host: string): Promise<string> {
      const answer = await target.nova('POST', '/servers', {
        server: { name, imageRef: target.imageId, flavorRef: target.flavorId, networks: 'none', host },
      });
      return (expectStatus(answer, 202).body as { server: { id: string } }).server.id;
    }

    async function serviceOf(host: string) {
      const [service] = await target.clients.compute.listServices({ binary: 'nova-compute', host });
      assert.ok(service, `no nova-compute service on ${host}`);
      return service;
    }

    /** Every compute host running, not forced down, enabled and up (earlier tests may have left one otherwise). */
    async function healHosts(): Promise<void> {
      const compute = target.clients.compute;
      for (const host of target.hosts) await target.startCompute(host);
      await waitFor(
        'every compute service to accept forced_down=false',
        async () => {
          for (const host of target.hosts) {
            const service = await serviceOf(host);
            if (service.forced_down) await compute.updateService(service.id, { forced_down: false });
          }
          return true;
        },
        60_000,
        500,
      );
      for (const host of target.hosts) {
        const service = await serviceOf(host);
        if (service.status !== 'enabled') await compute.updateService(service.id, { status: 'enabled' });
      }
      await waitFor(
        'every compute service up',
        async () =>
          (await compute.listServices({ binary: 'nova-compute' })).every((service) => service.state === 'up'),
        60_000,
        250,
      );
    }

    before(async () => {
      target = await createTarget();
      assert.ok(target.hosts.length >= 3, 'the contract needs three compute hosts');
      victim = target.hosts[target.hosts.length - 1]!;
      survivor = target.hosts[0]!;
      await healHosts();
      const suffix = randomUUID().slice(0, 6);
      servers.first = await boot(`contract-first-${suffix}`, victim);
      servers.second = await boot(`contract-second-${suffix}`, victim);
      servers.third = await boot(`contract-third-${suffix}`, victim);
      servers.deletedMidEvacuation = await boot(`contract-deleted-${suffix}`, victim);
      servers.elsewhere = await boot(`contract-elsewhere-${suffix}`, survivor);
      const deadline = Date.now() + 60_000;
      for (;;) {
        const listed = await Promise.all(
          Object.values(servers).map((id) => target.clients.compute.getServer(id)),
        );
        const failed = listed.find((server) => server.status === 'ERROR');
        if (failed) assert.fail(`contract server ${failed.id} went to ERROR on ${String(hostOf(failed))}`);
        if (listed.every((server) => server.status === 'ACTIVE')) break;
        if (Date.now() > deadline) assert.fail('the contract servers did not become ACTIVE within 60 s');
        await sleep(250);
      }
    });

    after(async () => {
      if (!target) return;
      for (const id of Object.values(servers)) await target.nova('DELETE', `/servers/${id}`);
      for (const id of createdImages) await target.glance('DELETE', `/v2/images/${id}`);
      if (createdFlavor) await target.nova('DELETE', `/flavors/${createdFlavor}`);
      if (createdAggregate !== null) {
        await target.nova('POST', `/os-aggregates/${createdAggregate}/action`, {
          remove_host: { host: survivor },
        });
        await target.nova('DELETE', `/os-aggregates/${createdAggregate}`);
      }
      await healHosts().catch(() => undefined);
      await target.close();
    });

    it('negotiates microversion 2.73 from the version document', async () => {
      assert.equal(await target.clients.compute.microversion(), '2.73');
    });

    it('lists nova-compute services by UUID, one per host, enabled and up', async () => {
      const services = await target.clients.compute.listServices({ binary: 'nova-compute' });
      assert.deepEqual(services.map((service) => service.host).sort(), [...target.hosts].sort());
      for (const service of services) {
        assert.match(service.id, UUID);
        assert.equal(service.binary, 'nova-compute');
        assert.equal(service.status, 'enabled');
        assert.equal(service.state, 'up');
        assert.equal(service.forced_down, false);
        assert.equal(service.zone, 'nova');
        assert.equal(service.disabled_reason, null);
        assert.ok(service.updated_at);
      }
    });

    it('filters services by host', async () => {
      const services = await target.clients.compute.listServices({ host: survivor });
      assert.ok(services.length >= 1);
      assert.ok(services.every((service) => service.host === survivor));
    });

    it('disables a compute service with a reason, then enabling clears the reason', async () => {
      const service = await serviceOf(survivor);
      const disabled = await target.clients.compute.updateService(service.id, {
        status: 'disabled',
        disabled_reason: 'contract test',
      });
      assert.equal(disabled.status, 'disabled');
      assert.equal(disabled.disabled_reason, 'contract test');
      assert.equal(disabled.id, service.id);
      const enabled = await target.clients.compute.updateService(service.id, { status: 'enabled' });
      assert.equal(enabled.status, 'enabled');
      assert.equal(enabled.disabled_reason, null);
    });

    it("answers an unknown service UUID with a 404 NovaApiError keeping Nova's message and request id", async () => {
      const id = randomUUID();
      const error = await novaError(target.clients.compute.updateService(id, { status: 'enabled' }), 404);
      assert.equal(error.apiMessage, `Service ${id} could not be found.`);
    });

    it('answers a service id that is not a UUID with 400', async () => {
      const error = await novaError(target.clients.compute.updateService('42', { status: 'enabled' }), 400);
      assert.equal(error.apiMessage, 'Invalid uuid 42');
    });

    it('lists hypervisors by UUID, one per compute host', async () => {
      const hypervisors = await target.clients.compute.listHypervisors();
      assert.deepEqual(hypervisors.map((each) => each.service?.host).sort(), [...target.hosts].sort());
      for (const hypervisor of hypervisors) {
        assert.match(hypervisor.id, UUID);
        assert.equal(hypervisor.state, 'up');
      }
    });

    it('follows hypervisors_links and flavors_links one item per page', async () => {
      const paging = new NovaClient({ auth: target.clients.auth, pageSize: 1 });
      const hypervisors = await paging.listHypervisors();
      assert.deepEqual(hypervisors.map((each) => each.hypervisor_hostname).sort(), [...target.hosts].sort());
      const flavors = await paging.listFlavors();
      assert.deepEqual(
        flavors.map((each) => each.id).sort(),
        (await target.clients.compute.listFlavors()).map((each) => each.id).sort(),
      );
    });

    it("lists a host's servers across pages with the admin view", async () => {
      const listed = await target.clients.compute.listServers({ host: victim, limit: 2 });
      const ids = listed.map((server) => server.id).sort();
      assert.deepEqual(
        ids,
        [servers.first!, servers.second!, servers.third!, servers.deletedMidEvacuation!].sort(),
      );
      for (const server of listed) {
        assert.equal(hostOf(server), victim);
        assert.equal(server.status, 'ACTIVE');
        assert.equal(server['OS-EXT-STS:vm_state'], 'active');
        assert.equal(server['OS-EXT-STS:task_state'], null);
        assert.equal(server.locked, false);
        assert.equal(server.flavor?.original_name !== undefined, true);
      }
    });

    it('gets a server; an unknown one is a 404 "Instance ... could not be found."', async () => {
      const server = await target.clients.compute.getServer(servers.elsewhere!);
      assert.equal(server.id, servers.elsewhere);
      assert.equal(hostOf(server), survivor);
      const id = randomUUID();
      const error = await novaError(target.clients.compute.getServer(id), 404);
      assert.equal(error.apiMessage, `Instance ${id} could not be found.`);
    });

    it('locks a server with a reason and unlocks it', async () => {
      const info = await target.clients.compute.lockServer(servers.elsewhere!, 'lifeguard-evacuation');
      assert.match(info.requestId ?? '', REQUEST_ID);
      const locked = await target.clients.compute.getServer(servers.elsewhere!);
      assert.equal(locked.locked, true);
      assert.equal(locked.locked_reason, 'lifeguard-evacuation');
      await target.clients.compute.unlockServer(servers.elsewhere!);
      const unlocked = await target.clients.compute.getServer(servers.elsewhere!);
      assert.equal(unlocked.locked, false);
      assert.equal(unlocked.locked_reason, null);
    });

    it('resets a server to error and back to active', async () => {
      await target.clients.compute.resetServerState(servers.elsewhere!, 'error');
      assert.equal((await target.clients.compute.getServer(servers.elsewhere!)).status, 'ERROR');
      await target.clients.compute.resetServerState(servers.elsewhere!, 'active');
      const server = await target.clients.compute.getServer(servers.elsewhere!);
      assert.equal(server.status, 'ACTIVE');
      assert.equal(server['OS-EXT-STS:vm_state'], 'active');
    });

    it('lists aggregates with their hosts and string metadata', async () => {
      const name = `contract-${randomUUID().slice(0, 8)}`;
      const created = expectStatus(await target.nova('POST', '/os-aggregates', { aggregate: { name } }), 200);
      createdAggregate = (created.body as { aggregate: { id: number } }).aggregate.id;
      expectStatus(
        await target.nova('POST', `/os-aggregates/${createdAggregate}/action`, {
          add_host: { host: survivor },
        }),
        200,
      );
      expectStatus(
        await target.nova('POST', `/os-aggregates/${createdAggregate}/action`, {
          set_metadata: { metadata: { evacuable: 'true' } },
        }),
        200,
      );
      const aggregate = (await target.clients.compute.listAggregates()).find((each) => each.name === name);
      assert.ok(aggregate);
      assert.deepEqual(aggregate.hosts, [survivor]);
      assert.deepEqual(aggregate.metadata, { evacuable: 'true' });
      assert.match(aggregate.uuid ?? '', UUID);
    });

    it("lists flavors with extra_specs and reads one flavor's extra specs", async () => {
      createdFlavor = `contract-${randomUUID().slice(0, 8)}`;
      expectStatus(
        await target.nova('POST', '/flavors', {
          flavor: { name: createdFlavor, id: createdFlavor, ram: 64, vcpus: 1, disk: 1 },
        }),
        200,
      );
      expectStatus(
        await target.nova('POST', `/flavors/${createdFlavor}/os-extra_specs`, {
          extra_specs: { evacuable: 'true' },
        }),
        200,
      );
      const flavors = await target.clients.compute.listFlavors();
      const flavor = flavors.find((each) => each.id === createdFlavor);
      assert.ok(flavor);
      assert.deepEqual(flavor.extra_specs, { evacuable: 'true' });
      assert.ok(flavors.some((each) => each.id === target.flavorId));
      assert.deepEqual(await target.clients.compute.getFlavorExtraSpecs(createdFlavor), {
        evacuable: 'true',
      });
    });

    it('delivers server external events: 200 for a server on a host, 207 with code 404 for an unknown server', async () => {
      const accepted = await target.clients.compute.createServerExternalEvents([
        { name: 'network-vif-plugged', server_uuid: servers.elsewhere!, tag: randomUUID() },
      ]);
      assert.equal(accepted.status, 200);
      assert.equal(accepted.events[0]?.code, 200);
      assert.equal(accepted.events[0]?.status, 'completed');
      const unknown = randomUUID();
      const mixed = await target.clients.compute.createServerExternalEvents([
        { name: 'network-vif-plugged', server_uuid: servers.elsewhere! },
        { name: 'network-vif-unplugged', server_uuid: unknown },
      ]);
      assert.equal(mixed.status, 207);
      assert.deepEqual(
        mixed.events.map((event) => [event.server_uuid, event.code, event.status]),
        [
          [servers.elsewhere, 200, 'completed'],
          [unknown, 404, 'failed'],
        ],
      );
    });

    it('refuses to evacuate to the same host (400) and to an unknown host (404)', async () => {
      const same = await novaError(
        target.clients.compute.evacuate(servers.elsewhere!, { host: survivor }),
        400,
      );
      assert.equal(same.apiMessage, "The target host can't be the same one.");
      const unknown = await novaError(
        target.clients.compute.evacuate(servers.elsewhere!, { host: 'no-such-host' }),
        404,
      );
      assert.equal(unknown.apiMessage, 'Compute host no-such-host not found.');
    });

    it('refuses to evacuate while the source compute service is up: 400 "still in use"', async () => {
      const error = await novaError(target.clients.compute.evacuate(servers.first!), 400);
      assert.equal(error.apiMessage, `Compute service of ${victim} is still in use.`);
    });

    it('evacuates after the compute is killed and forced down: ACTIVE on another host, migration done', async () => {
      const compute = target.clients.compute;
      await target.killCompute(victim);
      const service = await serviceOf(victim);
      const forced = await compute.updateService(service.id, { forced_down: true });
      assert.equal(forced.forced_down, true);
      assert.equal(forced.state, 'down');
      const disabled = await compute.updateService(service.id, {
        status: 'disabled',
        disabled_reason: 'contract: evacuating',
      });
      assert.equal(disabled.status, 'disabled');

      const first = await compute.evacuate(servers.first!);
      assert.match(first.requestId ?? '', REQUEST_ID);
      await compute.evacuate(servers.second!, { host: survivor });
      await waitFor(
        'both evacuated servers ACTIVE on another host',
        async () => {
          const [one, two] = await Promise.all([
            compute.getServer(servers.first!),
            compute.getServer(servers.second!),
          ]);
          if (one.status === 'ERROR' || two.status === 'ERROR')
            throw new Error('an evacuated server went to ERROR');
          return (
            one.status === 'ACTIVE' &&
            hostOf(one) !== victim &&
            two.status === 'ACTIVE' &&
            hostOf(two) === survivor
          );
        },
        60_000,
        250,
      );
      const migrations = await compute.listMigrations({
        instanceUuid: servers.first!,
        migrationType: 'evacuation',
      });
      assert.equal(migrations.length, 1);
      const [migration] = migrations;
      assert.equal(migration?.status, 'done');
      assert.equal(migration?.source_compute, victim);
      assert.equal(migration?.migration_type, 'evacuation');
      assert.equal(migration?.instance_uuid, servers.first);
      assert.match(migration?.uuid ?? '', UUID);
      assert.notEqual(migration?.dest_compute, victim);
      const second = await compute.listMigrations({
        instanceUuid: servers.second!,
        migrationType: 'evacuation',
      });
      assert.equal(second[0]?.dest_compute, survivor);
    });

    it('lists evacuation migrations by source_compute and changes-since, newest first, across pages', async () => {
      const since = new Date(Date.now() - 10 * 60_000).toISOString();
      const migrations = await target.clients.compute.listMigrations({
        sourceCompute: victim,
        migrationType: 'evacuation',
        changesSince: since,
        limit: 1,
      });
      assert.deepEqual(
        migrations.map((each) => each.instance_uuid).sort(),
        [servers.first!, servers.second!].sort(),
      );
      const created = migrations.map((each) => each.created_at);
      assert.deepEqual(created, [...created].sort().reverse());
      const none = await target.clients.compute.listMigrations({
        sourceCompute: victim,
        migrationType: 'evacuation',
        changesSince: new Date(Date.now() + 60 * 60_000).toISOString(),
      });
      assert.deepEqual(none, []);
    });

    it('deletes a server whose evacuation is under way: 404 at once, and its evacuation migration is listed no more', async () => {
      const compute = target.clients.compute;
      const id = servers.deletedMidEvacuation!;
      await compute.evacuate(id);
      // Right after the evacuate call: its rebuild on the destination is still to come.
      const deleted = await target.nova('DELETE', `/servers/${id}`);
      expectStatus(deleted, 204);
      await novaError(compute.getServer(id), 404);
      const since = new Date(Date.now() - 10 * 60_000).toISOString();
      const listed = async () => ({
        ofInstance: await compute.listMigrations({ instanceUuid: id, migrationType: 'evacuation' }),
        fromVictim: await compute.listMigrations({
          sourceCompute: victim,
          migrationType: 'evacuation',
          changesSince: since,
        }),
      });
      // Nova deletes the instance's migration records with it; the destination's rebuild, when it
      // runs, finds no instance and brings nothing back.
      for (const wait of [0, 3000]) {
        await sleep(wait);
        const { ofInstance, fromVictim } = await listed();
        assert.deepEqual(ofInstance, []);
        assert.ok(!fromVictim.some((each) => each.instance_uuid === id), 'not listed from the source');
        await novaError(compute.getServer(id), 404);
      }
    });

    it('refuses forced_down=false while done evacuations remain; accepts it once the compute restarted (completed)', async () => {
      const compute = target.clients.compute;
      const service = await serviceOf(victim);
      const refused = await novaError(compute.updateService(service.id, { forced_down: false }), 400);
      assert.match(
        refused.apiMessage,
        /^Unable to force up host \S+ as `done` evacuation migration records remain associated with the host\./,
      );
      await target.startCompute(victim);
      await waitFor(
        'the evacuation migrations to be completed',
        async () => {
          const migrations = await compute.listMigrations({
            sourceCompute: victim,
            migrationType: 'evacuation',
          });
          return migrations.length === 2 && migrations.every((each) => each.status === 'completed');
        },
        60_000,
        250,
      );
      const unforced = await compute.updateService(service.id, { forced_down: false });
      assert.equal(unforced.forced_down, false);
      await waitFor(
        'the restarted compute to report up',
        async () => (await serviceOf(victim)).state === 'up',
        30_000,
        250,
      );
      const remaining = await compute.listServers({ host: victim });
      assert.deepEqual(
        remaining.map((server) => server.id),
        [servers.third!],
      );
    });

    it('stops a server (SHUTOFF)', async () => {
      await target.clients.compute.stopServer(servers.elsewhere!);
      await waitFor(
        'the server to be SHUTOFF',
        async () => (await target.clients.compute.getServer(servers.elsewhere!)).status === 'SHUTOFF',
        30_000,
        250,
      );
    });

    it('reboots as Nova does: SOFT refused for a stopped server, HARD brings it ACTIVE, an unknown type refused', async () => {
      const id = servers.elsewhere!;
      const status = async () => (await target.clients.compute.getServer(id)).status;
      if ((await status()) !== 'SHUTOFF') {
        await target.clients.compute.stopServer(id);
        await waitFor('the server to be SHUTOFF', async () => (await status()) === 'SHUTOFF', 30_000, 250);
      }
      const soft = await target.nova('POST', `/servers/${id}/action`, { reboot: { type: 'SOFT' } });
      assert.equal(soft.status, 409);
      assert.match(JSON.stringify(soft.body), /Cannot 'reboot' instance .* while it is in vm_state stopped/);
      const unknown = await target.nova('POST', `/servers/${id}/action`, { reboot: { type: 'WARM' } });
      assert.equal(unknown.status, 400);
      expectStatus(await target.nova('POST', `/servers/${id}/action`, { reboot: { type: 'HARD' } }), 202);
      await waitFor('the server to be ACTIVE', async () => (await status()) === 'ACTIVE', 30_000, 250);
    });

    it('lists Glance images across pages and by tag', async () => {
      const tag = `contract-${randomUUID().slice(0, 8)}`;
      for (let index = 0; index < 3; index++) {
        const answer = await target.glance('POST', '/v2/images', {
          name: `${tag}-${index}`,
          disk_format: 'raw',
          container_format: 'bare',
          ...(index < 2 ? { tags: [tag] } : {}),
        });
        createdImages.push((expectStatus(answer, 201).body as { id: string }).id);
      }
      const all = await target.clients.image.listImages({ limit: 2 });
      for (const id of createdImages)
        assert.ok(
          all.some((image) => image.id === id),
          `image ${id} missing`,
        );
      assert.ok(all.some((image) => image.id === target.imageId));
      const tagged = await target.clients.image.listImages({ tag, limit: 1 });
      assert.deepEqual(tagged.map((image) => image.id).sort(), createdImages.slice(0, 2).sort());
      assert.ok(tagged.every((image) => image.tags.includes(tag)));
    });

    it("raises GlanceApiError for an invalid list request, keeping Glance's message", async () => {
      const error = await target.clients.image.listImages({ limit: -1 }).then(
        () => assert.fail('expected GlanceApiError'),
        (caught: unknown) => caught,
      );
      assert.ok(error instanceof GlanceApiError, String(error));
      assert.equal(error.status, 400);
      assert.match(error.apiMessage, /limit param must be positive/);
    });
  });
}
