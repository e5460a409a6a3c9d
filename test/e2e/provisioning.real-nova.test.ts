// Provisioning blocks end to end on real oslo.messaging: lifeguard runs as `npm start` runs it
// (startStack: the provisioning service — oslo RPC server, native consumers, outbox relay — and its
// port-status subscriber with the Nova notifier, each its own process, beside the other workers); a
// Python program built from Neutron's own agent RPC classes (DhcpPluginApi, PluginApi,
// PluginReportStateAPI over neutron_lib.rpc and oslo.messaging) plays the DHCP agent and the Open
// vSwitch agent. Ports of servers are created with native commands; each port turns ACTIVE only
// after both agents reported, and Nova — cloud-sim's, then the real-Nova harness's — receives
// `network-vif-plugged` for the server whose UUID is the port's device_id.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type Port, PROVISIONING_COMMANDS_EXCHANGE, type ProvisioningCommand } from '@lifeguard/contracts';
import type { StackOptions } from '@lifeguard/stack';
import {
  createTestVhost,
  deleteKeysWithPrefix,
  randomKeyPrefix,
  type TestVhost,
  testRedis,
  waitFor,
} from '@lifeguard/testing';
import amqp from 'amqplib';
import { ConfigurationFiles } from './support/configuration-files.ts';
import { EventTimeline } from './support/event-timeline.ts';
import { NeutronAgent } from './support/neutron-agent.ts';
import { realNova } from './support/real-nova.ts';
import { StackRun } from './support/stack-run.ts';

const DHCP_HOST = 'network-1';

/** lifeguard against one cloud, a Neutron agent, and the events timeline, on a private vhost. */
class ProvisioningBed {
  private created = 0;

  private constructor(
    readonly vhost: TestVhost,
    readonly keyPrefix: string,
    readonly files: ConfigurationFiles,
    readonly timeline: EventTimeline,
    readonly run: StackRun,
    readonly agent: NeutronAgent,
  ) {}

  /**
   * Starts lifeguard on the simulated default cloud, or on a real one given its clouds.yaml entry (with
   * InstanceHA DISABLED there: these tests are about ports, and the harness's computes are shared).
   */
  static async start(label: string, cloud: 'simulated' | { entry: unknown }): Promise<ProvisioningBed> {
    const vhost = await createTestVhost(label);
    const keyPrefix = randomKeyPrefix(label);
    const files = new ConfigurationFiles();
    const timeline = await EventTimeline.start(vhost.url);
    const stackCloud: StackOptions['cloud'] =
      cloud === 'simulated'
        ? { kind: 'simulated' }
        : {
            kind: 'openstack',
            cloudName: 'cloud',
            cloudsFile: files.cloudsYaml('cloud', cloud.entry),
            instanceHaConfigPath: files.configYaml({ DISABLED: true }),
            fencingConfigPath: files.fencingYaml({}),
          };
    const run = await StackRun.start({
      amqpUrl: vhost.url,
      keyPrefix,
      cloud: stackCloud,
      environment: { LIFEGUARD_LOG_LEVEL: 'debug' },
      workerEnvironment: {
        'provisioning-blocks': { LIFEGUARD_PROVISIONING_RPC_SERVER: 'lifeguard-e2e' },
        'port-status': { LIFEGUARD_PROVISIONING_SEND_EVENTS_INTERVAL_SECONDS: '0.5' },
      },
    });
    return new ProvisioningBed(vhost, keyPrefix, files, timeline, run, NeutronAgent.start(vhost.url));
  }

  /** Publishes native record commands to the commands exchange, as Neutron's API side would, with confirms. */
  async commands(commands: ReadonlyArray<ProvisioningCommand>): Promise<void> {
    const connection = await amqp.connect(this.vhost.url);
    try {
      const channel = await connection.createConfirmChannel();
      for (const command of commands) {
        channel.publish(
          PROVISIONING_COMMANDS_EXCHANGE,
          command.command,
          Buffer.from(JSON.stringify(command)),
          { persistent: true, contentType: 'application/json', mandatory: true },
        );
      }
      await channel.waitForConfirms();
    } finally {
      await connection.close();
    }
  }

  /**
   * A network with a DHCP subnet hosted by the DHCP agent on DHCP_HOST, the Open vSwitch agent on each
   * compute host alive (report_state through oslo.messaging), then one port per server, bound to the
   * server's host with the server's UUID as device_id. Returns the ports' ids.
   */
  async portsFor(servers: ReadonlyArray<{ id: string; host: string }>): Promise<string[]> {
    for (const answer of [
      await this.agent.reportState('dhcp', DHCP_HOST),
      ...(await Promise.all(
        [...new Set(servers.map((server) => server.host))].map((host) => this.agent.reportState('ovs', host)),
      )),
    ])
      assert.equal(answer.ok, true, JSON.stringify(answer));
    const network = randomUUID();
    const subnet = randomUUID();
    const ports: Port[] = servers.map((server, index) => ({
      id: randomUUID(),
      network_id: network,
      mac_address: `fa:16:3e:00:00:${String(index + 10).padStart(2, '0')}`,
      admin_state_up: true,
      status: 'DOWN',
      device_owner: 'compute:nova',
      device_id: server.id,
      fixed_ips: [{ subnet_id: subnet, ip_address: `10.20.0.${index + 10}` }],
      'binding:host_id': server.host,
      'binding:vnic_type': 'normal',
      'binding:vif_type': 'ovs',
      'binding:profile': {},
    }));
    await this.commands([
      { command: 'network.create', network: { id: network, name: 'e2e', admin_state_up: true } },
      {
        command: 'subnet.create',
        subnet: { id: subnet, network_id: network, cidr: '10.20.0.0/24', enable_dhcp: true },
      },
      { command: 'network.dhcp_agent.add', network_id: network, host: DHCP_HOST },
      ...ports.map((port) => ({ command: 'port.create' as const, port })),
    ]);
    // Neutron creates a port before any agent hears of it; here the commands are applied
    // asynchronously, so the agents wait until the service says every port was created.
    this.created += ports.length;
    const created = this.created;
    await waitFor(
      'the ports created',
      async () =>
        (await this.run.metric('provisioning-blocks', 'lifeguard_provisioning_commands_total', {
          command: 'port.create',
          outcome: 'applied',
        })) >= created,
      30_000,
      100,
    );
    return ports.map((port) => port.id);
  }

  async stop(): Promise<void> {
    await this.agent.stop();
    await this.run.stop();
    await this.timeline.close();
    const redis = testRedis();
    await deleteKeysWithPrefix(redis, this.keyPrefix);
    await redis.quit();
    await this.vhost.delete();
    this.files.remove();
  }
}

/**
 * Reports DHCP ready and then the devices up for `ports` and checks, from the events, that each port
 * turned ACTIVE only after the second report (the L2 entity) was sent.
 */
async function provision(
  bed: ProvisioningBed,
  ports: ReadonlyArray<string>,
  hosts: ReadonlyMap<string, string>,
): Promise<void> {
  const dhcp = await bed.agent.dhcpReady(DHCP_HOST, ports);
  assert.equal(dhcp.ok, true, JSON.stringify(dhcp));
  const l2SentAt = Date.now();
  for (const host of new Set(hosts.values())) {
    const onHost = ports.filter((port) => hosts.get(port) === host);
    const up = await bed.agent.devicesUp(host, onHost);
    assert.equal(up.ok, true, JSON.stringify(up));
    assert.deepEqual(
      [...((up as { result: { devices_up: string[] } }).result.devices_up ?? [])].sort(),
      [...onHost].sort(),
    );
  }
  for (const port of ports) {
    const active = await bed.timeline.waitFor(
      'port.status.changed',
      (event) => event.data.portId === port && event.data.status === 'ACTIVE',
      60_000,
    );
    assert.ok(
      Date.parse(active.occurredAt) >= l2SentAt - 5,
      'the port turned ACTIVE only after the L2 agent reported its device up',
    );
    const completions = bed.timeline
      .ofType('provisioning.complete')
      .filter((event) => event.data.objectId === port)
      .map((event) => event.data.entity);
    assert.ok(
      completions.includes('L2'),
      `provisioning.complete by L2 for ${port}: ${completions.join(',')}`,
    );
  }
}

describe('provisioning end to end: real oslo.messaging agents, ports ACTIVE, Nova told network-vif-plugged', {
  timeout: 300_000,
}, () => {
  describe('with the simulated default cloud (cloud-sim) as Nova', () => {
    let bed: ProvisioningBed;

    before(async () => {
      bed = await ProvisioningBed.start('e2e-pb-sim', 'simulated');
    });
    after(async () => {
      await bed?.stop();
    });

    it('the ports of three servers go ACTIVE after DHCP ready and device up, and Nova receives network-vif-plugged for each server', async () => {
      const sim = bed.run.stack.cloudSim!;
      const [first, second] = bed.run.stack.layout!.protectedHosts as [string, string];
      const servers = [
        ...sim.model.servers.onHost(first).slice(0, 2),
        ...sim.model.servers.onHost(second).slice(0, 1),
      ];
      const ports = await bed.portsFor(servers.map((server) => ({ id: server.id, host: server.host! })));
      const hosts = new Map(ports.map((port, index) => [port, servers[index]!.host!]));
      await provision(bed, ports, hosts);
      await waitFor(
        'network-vif-plugged for every port',
        () =>
          ports.every((port) =>
            sim.externalEvents().some((event) => event.tag === port && event.name === 'network-vif-plugged'),
          ),
        30_000,
      );
      for (const [index, port] of ports.entries()) {
        const received = sim.externalEvents().filter((event) => event.tag === port);
        assert.deepEqual(
          received.map((event) => [event.name, event.server_uuid, event.status, event.code]),
          [['network-vif-plugged', servers[index]!.id, 'completed', 200]],
          'one network-vif-plugged, for the server whose UUID is the device_id',
        );
      }
    });
  });

  describe('with the real-Nova harness as Nova', () => {
    const nova = realNova();
    const servers: Array<{ id: string; host: string }> = [];
    let bed: ProvisioningBed;

    before(async () => {
      const tag = randomUUID().slice(0, 6);
      for (const [index, host] of nova.hosts.slice(0, 2).entries()) {
        servers.push({ id: await nova.boot(`e2e-pb-${tag}-${index}`, host), host });
      }
      bed = await ProvisioningBed.start('e2e-pb-nova', { entry: nova.cloudEntry() });
    });
    after(async () => {
      await bed?.stop();
      await nova.deleteServers(servers.map((server) => server.id));
    });

    it('the ports of two real servers go ACTIVE, and nova-api takes network-vif-plugged for each (200, logged by Nova with the server and its host)', async () => {
      const ports = await bed.portsFor(servers);
      const hosts = new Map(ports.map((port, index) => [port, servers[index]!.host]));
      await provision(bed, ports, hosts);
      const log = join(nova.state, 'log', 'nova-api.log');
      for (const [index, port] of ports.entries()) {
        const server = servers[index]!;
        // nova-api (server_external_events.py) logs each event it accepts and hands to the compute.
        await waitFor(
          `nova-api to log the event of ${port}`,
          () =>
            readFileSync(log, 'utf8').includes(
              `Creating event network-vif-plugged:${port} for instance ${server.id} on ${server.host}`,
            ),
          30_000,
          200,
        );
      }
      const answered = () =>
        bed.run.metric('port-status', 'lifeguard_provisioning_nova_events_total', {
          name: 'network-vif-plugged',
          code: '200',
        });
      await waitFor(
        'Nova answered 200 for each network-vif-plugged',
        async () => (await answered()) >= ports.length,
      );
      assert.equal(await answered(), ports.length, 'one network-vif-plugged per port');
    });
  });
});
