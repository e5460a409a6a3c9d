import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Port } from '@lifeguard/contracts';
import { BlockStore, PortStore, ProvisioningKeys } from '@lifeguard/provisioning-blocks';
import { deleteKeysWithPrefix, randomKeyPrefix, testRedis } from '@lifeguard/testing';
import { lifeguard } from './support/cli-harness.ts';

const BLOCKED = '3f2a9c1e-7b44-4d0e-9a51-0c6f2b8d1e77';
const ACTIVE = '8c1d2e3f-0000-4aaa-bbbb-123456789abc';

describe('lifeguard blocks <port>', () => {
  const prefix = randomKeyPrefix('cli-blocks');
  const redis = testRedis();
  const env = { LIFEGUARD_REDIS_KEY_PREFIX: prefix };
  const source = { service: 'test', instance: 'test-1' };
  const keys = new ProvisioningKeys(prefix);
  const ports = new PortStore(redis, keys, source);

  before(async () => {
    const port = (id: string, mac: string, status: 'DOWN' | 'ACTIVE') =>
      Port.parse({
        id,
        network_id: 'net-1',
        mac_address: mac,
        status,
        device_owner: 'compute:nova',
        device_id: 'server-1',
        fixed_ips: [{ subnet_id: 'subnet-1', ip_address: '10.0.0.5' }],
        'binding:host_id': 'compute-1',
        'binding:vif_type': 'ovs',
      });
    const blocked = await ports.write(
      BLOCKED,
      null,
      port(BLOCKED, 'fa:16:3e:00:00:01', 'DOWN'),
      { previous: '', current: 'fa:16:3e:00:00:01' },
      [
        { operation: 'add', entity: 'L2' },
        { operation: 'add', entity: 'DHCP' },
      ],
      null,
    );
    assert.equal(blocked.status, 'ok');
    const active = await ports.write(
      ACTIVE,
      null,
      port(ACTIVE, 'fa:16:3e:00:00:02', 'ACTIVE'),
      { previous: '', current: 'fa:16:3e:00:00:02' },
      [],
      null,
    );
    assert.equal(active.status, 'ok');
  });

  after(async () => {
    await deleteKeysWithPrefix(redis, prefix);
    await redis.quit();
  });

  it('shows the port, its status and the entities still blocking it', async () => {
    const run = await lifeguard(['blocks', BLOCKED], env);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, new RegExp(`^port:\\s+${BLOCKED}$`, 'm'));
    assert.match(run.stdout, /^status:\s+DOWN: waiting for DHCP and L2$/m);
    assert.match(
      run.stdout,
      /^provisioning blocks:\s+DHCP, L2 \(the port turns ACTIVE only when no provisioning block remains\)$/m,
    );
    assert.match(run.stdout, /^binding:host_id:\s+compute-1$/m);
    assert.match(run.stdout, /^fixed_ips:\s+10\.0\.0\.5 on subnet subnet-1$/m);
  });

  it('follows the blocks as entities complete, down to none', async () => {
    const blocks = new BlockStore(redis, keys, source);
    await blocks.provisioningComplete(BLOCKED, 'port', 'DHCP');
    const one = await lifeguard(['blocks', BLOCKED, '--json'], env);
    assert.equal(one.code, 0, one.stderr);
    assert.deepEqual(one.json<{ blocks: string[]; blocked: boolean }>().blocks, ['L2']);
    await blocks.provisioningComplete(BLOCKED, 'port', 'L2');
    const none = await lifeguard(['blocks', BLOCKED], env);
    assert.match(none.stdout, /^status:\s+DOWN: no block left; the completion event is on its way$/m);
    assert.match(none.stdout, /^provisioning blocks:\s+none$/m);
  });

  it('gives the port record and its blocks as JSON, and finds a port by a device name', async () => {
    const run = await lifeguard(['blocks', `tap${ACTIVE.slice(0, 11)}`, '--json'], env);
    assert.equal(run.code, 0, run.stderr);
    const body = run.json<{ port: { id: string; status: string }; blocks: string[]; blocked: boolean }>();
    assert.equal(body.port.id, ACTIVE);
    assert.equal(body.port.status, 'ACTIVE');
    assert.deepEqual(body.blocks, []);
    assert.equal(body.blocked, false);
  });

  it('an unknown port fails with exit status 1 and says where it looked', async () => {
    const run = await lifeguard(['blocks', 'no-such-port'], env);
    assert.equal(run.code, 1);
    assert.match(run.stderr, /^lifeguard: no port no-such-port in the provisioning service's records\n/);
    assert.match(run.stderr, new RegExp(`key prefix "${prefix}"`));
  });
});
