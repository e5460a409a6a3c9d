import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CloudSim } from '@lifeguard/cloud-sim';
import {
  isEvacuableAggregate,
  isEvacuableFlavor,
  isEvacuableImage,
  parseDisabledReason,
} from '@lifeguard/instance-ha';
import { createOpenStackClients } from '@lifeguard/openstack';
import { type DemoCloudLayout, demoCloudLayout, startDemoCloud } from '../src/index.ts';

describe('the demo cloud', () => {
  let sim: CloudSim;
  let layout: DemoCloudLayout;
  before(async () => {
    ({ sim, layout } = await startDemoCloud());
  });
  after(async () => {
    await sim.close();
  });

  it('has 12 hosts: 8 protected, 2 in an untagged aggregate, 2 reserved spares', () => {
    assert.deepEqual(
      layout.hosts,
      Array.from({ length: 12 }, (_, index) => `compute-${String(index + 1).padStart(2, '0')}`),
    );
    assert.deepEqual(layout.protectedHosts, layout.hosts.slice(0, 8));
    assert.deepEqual(layout.unprotectedHosts, ['compute-09', 'compute-10']);
    assert.deepEqual(layout.reservedHosts, ['compute-11', 'compute-12']);
  });

  it('as Nova and Glance show it: aggregates, tagged flavors and image, reserved hosts disabled with a reserved marker', async () => {
    const { compute, image } = createOpenStackClients({
      env: {
        OS_AUTH_TYPE: 'admin_token',
        OS_TOKEN: 'admin:admin',
        OS_ENDPOINT: sim.urls.compute,
        OS_IMAGE_ENDPOINT_OVERRIDE: sim.urls.image,
      },
      searchDirectories: [],
    });
    const aggregates = await compute.listAggregates();
    const evacuable = aggregates.filter((aggregate) => isEvacuableAggregate(aggregate, 'evacuable'));
    assert.deepEqual(
      evacuable.map((aggregate) => aggregate.name),
      ['ha-compute'],
    );
    assert.deepEqual(
      [...evacuable[0]!.hosts].sort(),
      [...layout.protectedHosts, ...layout.reservedHosts].sort(),
    );
    assert.equal(evacuable[0]!.metadata['instanceha:max_failures'], '3');
    const services = await compute.listServices({ binary: 'nova-compute' });
    for (const service of services) {
      const reserved = layout.reservedHosts.includes(service.host);
      assert.equal(service.status, reserved ? 'disabled' : 'enabled', service.host);
      if (reserved) assert.equal(parseDisabledReason(service.disabled_reason).kind, 'reserved');
    }
    const flavors = await compute.listFlavors();
    const tagged = [];
    for (const flavor of flavors) {
      if (isEvacuableFlavor(await compute.getFlavorExtraSpecs(flavor.id), 'evacuable'))
        tagged.push(flavor.name);
    }
    assert.deepEqual(tagged.sort(), ['ha.medium', 'ha.small']);
    const images = await image.listImages();
    assert.deepEqual(
      images.filter((each) => isEvacuableImage(each, 'evacuable')).map((each) => each.name),
      ['cirros-ha'],
    );
  });

  it('puts web (evacuable flavor), db (evacuable image) and batch (neither) servers on every host that is not a spare', () => {
    for (const host of [...layout.protectedHosts, ...layout.unprotectedHosts]) {
      const names = sim.model.servers
        .onHost(host)
        .map((server) => server.name)
        .sort();
      const suffix = host.slice('compute-'.length);
      assert.deepEqual(names, [`batch-${suffix}`, `db-${suffix}`, `web-${suffix}`]);
    }
    for (const host of layout.reservedHosts) assert.equal(sim.model.servers.countOnHost(host), 0);
  });

  it('refuses a layout with no protected host', () => {
    assert.throws(() => demoCloudLayout({ hosts: 4, reservedHosts: 2, unprotectedHosts: 2 }), RangeError);
    assert.deepEqual(demoCloudLayout({ hosts: 3 }).protectedHosts, [
      'compute-01',
      'compute-02',
      'compute-03',
    ]);
  });
});
