import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe } from 'node:test';
import type { EventOf } from '@lifeguard/contracts';
import { realNova } from '../../e2e/support/real-nova.ts';
import { RealNovaDeployment } from '../../e2e/support/real-nova-deployment.ts';
import {
  actedOnOthers,
  evacuationsPerServer,
  INCIDENT_CHAIN,
  journalOf,
  lostEvents,
} from './incident-figures.ts';
import { OpenStackFaultProxy, type ProxiedRequest } from './openstack-fault-proxy.ts';

/** What one incident under a fault left behind. */
export interface IncidentOutcome {
  readonly incidentId: string;
  readonly killedAt: number;
  readonly down: EventOf<'host.down'>;
  readonly fenced: EventOf<'host.fenced'>;
  readonly reenabled: EventOf<'host.reenabled'>;
  readonly eventsLost: number;
  readonly duplicateEffects: number;
  readonly actedOnOthers: number;
  readonly powerCommands: string[];
}

/** What the rows of a Nova fault file use: the harness, the proxy, the deployment and the helpers. */
export interface NovaFaultContext {
  readonly nova: ReturnType<typeof realNova>;
  readonly proxy: OpenStackFaultProxy;
  readonly deployment: RealNovaDeployment;
  incidentUnderFault(
    name: string,
    duringIncident: (phase: 'killed' | 'down', incidentId: string | null) => void,
  ): Promise<IncidentOutcome>;
  assertCompletedOnce(outcome: IncidentOutcome): void;
  answered(since: number, statuses: ReadonlyArray<number>, service?: string): ProxiedRequest[];
  monitorLogs(prefix: string, since: number): Array<Readonly<Record<string, unknown>>>;
}

/**
 * A describe block of Nova and Keystone faults on the real-Nova harness with Keystone: lifeguard
 * (password auth, fence_ipmilan through ipmi_sim) talks to Keystone and the nova-api behind it through
 * an OpenStackFaultProxy; `rows` defines the tests (`it`), each one incident under a fault.
 */
export function describeNovaFaults(title: string, rows: (context: NovaFaultContext) => void): void {
  describe(title, { timeout: 590_000 }, () => {
    const nova = realNova();
    const victim = nova.hosts[nova.hosts.length - 1]!;
    const bootedServers: string[] = [];
    let proxy: OpenStackFaultProxy;
    let deployment: RealNovaDeployment;

    before(async () => {
      const keystoneUrl = process.env.KEYSTONE_URL;
      const keystoneNovaUrl = process.env.KEYSTONE_NOVA_URL;
      if (!keystoneUrl || !keystoneNovaUrl) {
        throw new Error(
          'the real-Nova harness runs without Keystone (KEYSTONE_URL/KEYSTONE_NOVA_URL missing): run this file through `npm run test:faults`, which starts it with RN_KEYSTONE=1',
        );
      }
      await nova.restore();
      proxy = await OpenStackFaultProxy.start({
        identity: keystoneUrl.replace(/\/v3\/?$/, ''),
        compute: keystoneNovaUrl.replace(/\/+$/, ''),
      });
      deployment = await RealNovaDeployment.start({
        label: 'faults-nova',
        fencing: 'ipmi',
        logLevel: 'info',
        cloudEntry: {
          auth_type: 'password',
          auth: {
            auth_url: `${proxy.url}/identity/v3`,
            username: 'admin',
            password: process.env.RN_KEYSTONE_ADMIN_PASSWORD ?? 'admin',
            project_name: 'admin',
            user_domain_name: 'Default',
            project_domain_name: 'Default',
          },
          region_name: process.env.RN_KEYSTONE_REGION ?? 'RegionOne',
          compute_endpoint_override: `${proxy.url}/compute`,
          image_endpoint_override: nova.glanceUrl,
        },
      });
    });

    after(async () => {
      proxy?.inject(null);
      try {
        await deployment?.stop();
      } finally {
        await proxy?.close();
        await nova.deleteServers(bootedServers);
        await nova.restore();
      }
    });

    /**
     * Boots two servers on the victim, SIGKILLs its nova-compute, applies `duringIncident` (called with
     * the phase: `killed` right after the kill, `down` once host.down arrived), and waits until the host
     * is re-enabled. Counts what the incident left: events lost, duplicate effects, hosts acted on wrongly.
     */
    async function incidentUnderFault(
      name: string,
      duringIncident: (phase: 'killed' | 'down', incidentId: string | null) => void,
    ): Promise<IncidentOutcome> {
      const { timeline } = deployment;
      await nova.restore();
      const tag = randomUUID().slice(0, 6);
      const servers: string[] = [];
      for (let index = 0; index < 2; index++)
        servers.push(await nova.boot(`faults-${name}-${tag}-${index}`, victim));
      bootedServers.push(...servers);
      const bmc = deployment.bmcs.get(victim)!;
      const commandsBefore = bmc.powerCommands().length;
      const killedAt = Date.now();
      await nova.signalCompute(victim, 'KILL');
      duringIncident('killed', null);
      const down = await timeline.waitFor(
        'host.down',
        (event) => event.data.host === victim && Date.parse(event.occurredAt) >= killedAt,
        180_000,
      );
      const incidentId = down.data.incidentId;
      duringIncident('down', incidentId);
      const fenced = await timeline.waitFor(
        'host.fenced',
        (event) => event.data.incidentId === incidentId,
        180_000,
      );
      await timeline.waitFor('host.evacuated', (event) => event.data.incidentId === incidentId, 240_000);
      proxy.inject(null);
      const reenabled = await timeline.waitFor(
        'host.reenabled',
        (event) => event.data.incidentId === incidentId,
        240_000,
      );

      const incidents = new Set(
        timeline
          .ofType('host.down')
          .filter((event) => event.data.host === victim && Date.parse(event.occurredAt) >= killedAt)
          .map((event) => event.data.incidentId),
      );
      const fencedEvents = timeline.forIncident(incidentId).filter((event) => event.type === 'host.fenced');
      const evacuations = await evacuationsPerServer(deployment, victim, servers);
      const duplicateEffects =
        incidents.size -
        1 +
        (fencedEvents.length - 1) +
        [...evacuations.values()].reduce((sum, count) => sum + Math.max(0, count - 1), 0);
      const eventsLost =
        (await lostEvents(timeline, journalOf(deployment), incidentId, INCIDENT_CHAIN)) +
        [...evacuations.values()].filter((count) => count === 0).length;
      return {
        incidentId,
        killedAt,
        down,
        fenced,
        reenabled,
        eventsLost,
        duplicateEffects,
        actedOnOthers: actedOnOthers(timeline, victim, killedAt).length,
        powerCommands: bmc.powerCommands().slice(commandsBefore),
      };
    }

    /** The assertions every row shares: the incident completed once, in order, and touched no other host. */
    function assertCompletedOnce(outcome: IncidentOutcome): void {
      const order = deployment.timeline
        .forIncident(outcome.incidentId)
        .filter((event) => (INCIDENT_CHAIN as ReadonlyArray<string>).includes(event.type))
        .map((event) => event.type);
      assert.deepEqual(
        [...new Set(order)],
        [...INCIDENT_CHAIN],
        'down, fenced, evacuation, evacuated, re-enabled',
      );
      assert.deepEqual(
        [outcome.fenced.data.proof, outcome.fenced.data.method],
        ['power-off-confirmed', 'fence_ipmilan'],
        'fenced by fence_ipmilan, power read back as off, before any evacuation',
      );
      assert.equal(outcome.powerCommands[0], '0', 'the BMC powered the host off first');
      assert.equal(outcome.eventsLost, 0, 'no event lost');
      assert.equal(outcome.duplicateEffects, 0, 'one incident, one fence, one evacuation per server');
      assert.equal(outcome.actedOnOthers, 0, 'no other host was marked down, fenced or evacuated');
    }

    /** Requests of `service` since `since` that the proxy answered with one of `statuses`. */
    const answered = (
      since: number,
      statuses: ReadonlyArray<number>,
      service = 'compute',
    ): ProxiedRequest[] =>
      proxy
        .since(since)
        .filter((request) => request.service === service && statuses.includes(request.status));

    /** Node monitor log records whose message starts with `prefix`, written at or after `since`. */
    const monitorLogs = (prefix: string, since: number) =>
      deployment.run
        .records('node-monitor')
        .filter(
          (record) => String(record.msg ?? '').startsWith(prefix) && Date.parse(String(record.time)) >= since,
        );

    rows({
      nova,
      get proxy() {
        return proxy;
      },
      get deployment() {
        return deployment;
      },
      incidentUnderFault,
      assertCompletedOnce,
      answered,
      monitorLogs,
    });
  });
}
