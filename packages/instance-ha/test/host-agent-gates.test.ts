// HEARTBEAT_DETECTION through the one gate model: the admission of a cycle (admit) and every later
// action's re-check (ACTION_GATES), each case a world the host agents and Nova describe together.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Server } from '@lifeguard/openstack';
import {
  ACTION_GATES,
  type AdmissionSnapshot,
  admit,
  type Categorisation,
  type HostAgentEvidence,
  hostAgentFailures,
  INITIAL_HEARTBEAT_CLIFF,
  type InstanceHaConfig,
  loadInstanceHaConfig,
  NO_MASS_EVENT_HOLDS,
  runGates,
  type ServiceView,
} from '../src/index.ts';
import { categorisedAt, novaTime, serviceView } from './support/service-view.ts';

const now = new Date('2026-12-04T10:00:00Z');
const ago = (seconds: number) => new Date(now.getTime() - seconds * 1000);

function configWith(env: Record<string, string> = {}): InstanceHaConfig {
  return loadInstanceHaConfig({
    path: '/nonexistent/config.yaml',
    env: {
      THRESHOLD: '100',
      TAGGED_AGGREGATES: 'false',
      DELTA: '30',
      CHECK_HEARTBEAT: 'true',
      HEARTBEAT_DETECTION: 'true',
      HEARTBEAT_DOWN_AFTER: '3',
      NOVA_REPORT_INTERVAL: '2',
      ...env,
    },
  }).config;
}

/** A compute host as Nova and its agent describe it. */
interface Host {
  readonly name: string;
  /** Seconds since nova-compute's last report (`updated_at`). */
  readonly reported: number;
  /** Nova's `state` (default up). */
  readonly state?: 'up' | 'down';
  /** Seconds since the agent's last heartbeat per network (none: no agent). */
  readonly heard?: Record<string, number>;
}

const healthy = (name: string): Host => ({ name, reported: 1, heard: { mgmt: 0.5, storage: 0.5 } });
/** Host and agent died together 4 s ago: silent everywhere, its report overdue. */
const dead = (name: string): Host => ({ name, reported: 4.2, heard: { mgmt: 4, storage: 4 } });

function evidenceOf(hosts: ReadonlyArray<Host>): HostAgentEvidence {
  const networks = new Map<string, Map<string, Date>>();
  for (const host of hosts)
    for (const [network, seconds] of Object.entries(host.heard ?? {})) {
      if (!networks.has(network)) networks.set(network, new Map());
      networks.get(network)!.set(host.name, ago(seconds));
    }
  return { networks, processes: new Map() };
}

/** The cycle's world as the node monitor reads it, the host agent channel's failures added. */
function worldOf(hosts: ReadonlyArray<Host>, config = configWith()) {
  const services: ServiceView[] = hosts.map((host) =>
    serviceView(host.name, now, { state: host.state ?? 'up', updated_at: novaTime(ago(host.reported)) }),
  );
  const evidence = evidenceOf(hosts);
  let categorisation: Categorisation = categorisedAt(services, now, config.deltaSeconds);
  if (config.heartbeatDetection) {
    const found = hostAgentFailures(
      {
        services: categorisation.services,
        alreadyFailed: new Set(categorisation.freshFailures.map((failure) => failure.service.host)),
        evidence,
        listeningSince: ago(3600),
        now,
      },
      {
        downAfterSeconds: config.heartbeatDownAfterSeconds,
        novaReportIntervalSeconds: config.novaReportIntervalSeconds,
      },
    );
    categorisation = {
      ...categorisation,
      freshFailures: [...categorisation.freshFailures, ...found.failures],
    };
  }
  const snapshot: AdmissionSnapshot = {
    now,
    categorisation,
    openIncidents: new Map(),
    config,
    fencingToken: 1,
    heartbeats: { last: new Map(), listeningSince: ago(3600), hostAgents: evidence },
    heartbeatCliff: INITIAL_HEARTBEAT_CLIFF,
    massEventHolds: NO_MASS_EVENT_HOLDS,
    candidateFacts: {
      servers: new Map(
        categorisation.freshFailures.map(({ service }) => [
          service.host,
          [{ id: `server-of-${service.host}`, name: 'vm' } as unknown as Server],
        ]),
      ),
      context: {
        tag: config.evacuableTag,
        taggedImages: false,
        taggedFlavors: false,
        evacuableImageIds: new Set(),
        evacuableFlavors: { ids: new Set(), names: new Set() },
      },
      aggregates: null,
      schedulers: [{ state: 'up' }],
      kdumpClocks: new Map(),
    },
  };
  const recheck = (host: string) =>
    runGates(
      ACTION_GATES,
      {
        now,
        services,
        openIncidents: new Map(),
        heartbeats: new Map(),
        hostAgents: evidence,
        aggregates: null,
        config,
      },
      host,
    );
  const decision = admit(snapshot);
  return {
    admitted: decision.admitted.map((each) => each.service.host),
    blocked: decision.blocked.map((each) => [each.gate, [...each.hosts]]),
    recheck,
  };
}

describe('HEARTBEAT_DETECTION through the admission and the re-checks (docs/host-agent.md#detection-on-heartbeats)', () => {
  it('a host dead with its agent is admitted before DELTA, and a fence re-check passes it', () => {
    const world = worldOf([
      dead('compute-1'),
      healthy('compute-2'),
      healthy('compute-3'),
      healthy('compute-4'),
    ]);
    assert.deepEqual(world.admitted, ['compute-1']);
    const run = world.recheck('compute-1');
    assert.equal(run.verdict, 'pass', run.reason);
    assert.match(run.judgements[0]!.reason, /host agent silent on every network/);
  });

  it('off by default: the same world admits nothing until DELTA', () => {
    const config = configWith({ HEARTBEAT_DETECTION: 'false' });
    const world = worldOf([dead('compute-1'), healthy('compute-2'), healthy('compute-3')], config);
    assert.deepEqual(world.admitted, []);
    assert.equal(world.recheck('compute-1').verdict, 'recovered');
  });

  it('false positive: heartbeats missing on one network only fail nothing, and a re-check finds the host up', () => {
    const host: Host = { name: 'compute-1', reported: 9, heard: { mgmt: 30, storage: 0.3 } };
    const world = worldOf([host, healthy('compute-2'), healthy('compute-3')]);
    assert.deepEqual(world.admitted, []);
    assert.equal(world.recheck('compute-1').verdict, 'recovered');
  });

  it('false positive: the agent silent while nova-compute reports fails nothing, and a re-check finds the host up', () => {
    const host: Host = { name: 'compute-1', reported: 0.5, heard: { mgmt: 20, storage: 20 } };
    const world = worldOf([host, healthy('compute-2'), healthy('compute-3')]);
    assert.deepEqual(world.admitted, []);
    assert.deepEqual(world.blocked, []);
    assert.equal(world.recheck('compute-1').verdict, 'recovered');
  });

  it('false positive: the agent silent a moment after nova-compute reported is not failed before the report is overdue', () => {
    const host: Host = { name: 'compute-1', reported: 2.5, heard: { mgmt: 3.2, storage: 3.2 } };
    const world = worldOf([host, healthy('compute-2'), healthy('compute-3')]);
    assert.deepEqual(world.admitted, []);
    assert.equal(world.recheck('compute-1').verdict, 'defer');
  });

  it('false positive: nova-compute stopped (Nova says down) on a host whose agent is heard is held as reachable', () => {
    const host: Host = { name: 'compute-1', reported: 60, state: 'down', heard: { mgmt: 0.4, storage: 0.4 } };
    const world = worldOf([host, healthy('compute-2'), healthy('compute-3')]);
    assert.deepEqual(world.admitted, []);
    assert.deepEqual(world.blocked, [['host-reachable', ['compute-1']]]);
    assert.equal(world.recheck('compute-1').verdict, 'recovered');
  });

  it('false positive: most agents falling quiet at once (the monitor cut off) fail nobody: heartbeat cliff', () => {
    const world = worldOf([dead('compute-1'), dead('compute-2'), dead('compute-3'), healthy('compute-4')]);
    assert.deepEqual(world.admitted, []);
    assert.deepEqual(world.blocked, [['heartbeat-cliff', ['compute-1', 'compute-2', 'compute-3']]]);
  });

  it('a host without an agent is judged by InstanceHA’s rules alone', () => {
    const host: Host = { name: 'compute-1', reported: 60, state: 'down' };
    const world = worldOf([host, healthy('compute-2'), healthy('compute-3')]);
    assert.deepEqual(world.admitted, ['compute-1']);
  });
});
