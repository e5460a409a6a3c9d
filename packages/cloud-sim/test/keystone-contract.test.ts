import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createOpenStackClients, type KeystoneAuth } from '@lifeguard/openstack';
import { sleep } from '@lifeguard/testing';
import { keystoneContract } from '../../openstack/test/keystone-contract.ts';
import { type CloudSim, startCloudSim } from '../src/index.ts';

// The same Keystone contract against cloud-sim's Keystone subset (Nova behind it: auth keystone).
keystoneContract(async () => {
  const sim = await startCloudSim({
    hosts: 3,
    auth: 'keystone',
    adminPassword: 'sim-admin-password',
    redfishPort: false,
  });
  return {
    label: 'cloud-sim',
    authUrl: sim.urls.identity,
    computeUrl: sim.urls.compute,
    region: 'RegionOne',
    adminPassword: 'sim-admin-password',
    hosts: [...sim.model.hosts.keys()],
    close: () => sim.close(),
  };
});

describe('Keystone token expiry and renewal (cloud-sim)', () => {
  let sim: CloudSim;
  before(async () => {
    sim = await startCloudSim({ hosts: 2, auth: 'keystone', tokenLifetimeSeconds: 2, redfishPort: false });
  });
  after(() => sim.close());

  const clientsFor = () =>
    createOpenStackClients({
      env: {
        OS_AUTH_URL: sim.urls.identity,
        OS_USERNAME: 'admin',
        OS_PASSWORD: 'admin',
        OS_PROJECT_NAME: 'admin',
      },
      searchDirectories: [],
    });

  it('renews the token before it expires (half its lifetime for short tokens)', async () => {
    const clients = clientsFor();
    const auth = clients.auth as KeystoneAuth;
    const first = await auth.token();
    await clients.compute.listServices();
    assert.equal(await auth.token(), first);
    await sleep(1100);
    await clients.compute.listServices();
    assert.notEqual(await auth.token(), first);
    assert.equal(auth.tokensIssued, 2);
    await sleep(2100);
    assert.equal(
      (await clients.compute.listServices({ binary: 'nova-compute' })).length,
      2,
      'calls keep working past the first token expiry',
    );
  });

  it('re-authenticates once after a 401 (revoked token) and retries the call', async () => {
    const clients = clientsFor();
    const auth = clients.auth as KeystoneAuth;
    await clients.compute.listServices();
    const revoked = await auth.token();
    sim.identity.revoke(revoked);
    const services = await clients.compute.listServices({ binary: 'nova-compute' });
    assert.equal(services.length, 2);
    assert.notEqual(await auth.token(), revoked);
    assert.equal(auth.tokensIssued, 2);
  });
});
