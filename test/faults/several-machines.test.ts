// lifeguard's workers spread over three simulated machines (network namespaces on a bridge, made by
// the test as root): machine 1 runs a node monitor and an evacuation worker, machine 2 the same,
// machine 3 an evacuation worker; the rest of the stack (fencing worker, cloud-sim, brokers) stays in
// the root namespace, reached through the bridge. The test cuts a machine off (its veth down: silence,
// no reset) and counts, for each killed compute host, incidents, fences and evacuations
// (docs/failure-modes.md#partitions-between-lifeguards-own-machines).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { LeaderLease, nodeMonitorLeaderKey } from '@lifeguard/runtime';
import {
  createNetworkNamespaces,
  type NetworkNamespaces,
  networkNamespacesUnavailable,
  RABBITMQ,
  REDIS_URL,
  type SimulatedMachine,
  sleep,
  waitFor,
} from '@lifeguard/testing';
import { SimulatedDeployment } from '../e2e/support/simulated-deployment.ts';
import { recordFaultRow } from './support/fault-table.ts';
import { duplicateEffects, evacuableServers, hostFigures, lostEffects } from './support/host-figures.ts';
import { startWorkerCopy, type WorkerCopy } from './support/worker-copy.ts';

/** A log record's time (pino's ISO time), in milliseconds since the epoch. */
const timeOf = (record: Record<string, unknown>): number => Date.parse(String(record.time));

/** BullMQ job lock of the evacuation workers (ms): a cut worker's jobs are taken over after it. */
const JOB_LOCK_MILLISECONDS = 5_000;

describe('workers on several machines (network namespaces), one machine cut off at a time', {
  timeout: 1_500_000,
}, () => {
  let deployment: SimulatedDeployment;
  let network: NetworkNamespaces;
  const monitors = new Map<SimulatedMachine, WorkerCopy>();
  const evacuationWorkers = new Map<SimulatedMachine, WorkerCopy>();

  before(async () => {
    assert.equal(networkNamespacesUnavailable(), null, 'network namespaces can be made here (root)');
    deployment = await SimulatedDeployment.start({
      label: 'several-machines',
      cloud: {
        reportIntervalSeconds: 1,
        serviceDownTimeSeconds: 4,
        bootMilliseconds: 1000,
        evacuationAcceptMilliseconds: 0,
        evacuationRebuildMilliseconds: 3000,
      },
      instanceHa: { POLL: '1', DELTA: '4' },
      workerEnvironment: {
        'node-monitor': { LIFEGUARD_NODE_MONITOR_LEASE_TTL_SECONDS: '3' },
        'evacuation-worker': {
          LIFEGUARD_JOB_LOCK_SECONDS: String(JOB_LOCK_MILLISECONDS / 1000),
          LIFEGUARD_JOB_STALLED_CHECK_SECONDS: '1',
        },
      },
    });
    network = await createNetworkNamespaces(3);
    await network.expose(Number(new URL(REDIS_URL).port || 6379));
    await network.expose(RABBITMQ.port);
    await network.expose(Number(new URL(deployment.sim.urls.api).port));
    const [first, second, third] = network.machines as [SimulatedMachine, SimulatedMachine, SimulatedMachine];
    const onMachine = (machine: SimulatedMachine) => ({ machine, reachAt: network.bridgeAddress });
    for (const [index, machine] of [first, second].entries()) {
      monitors.set(
        machine,
        startWorkerCopy(deployment.run, 'node-monitor', {
          name: `machine-${index + 1}:node-monitor`,
          machine: onMachine(machine),
        }),
      );
    }
    for (const [index, machine] of [first, second, third].entries()) {
      evacuationWorkers.set(
        machine,
        startWorkerCopy(deployment.run, 'evacuation-worker', {
          name: `machine-${index + 1}:evacuation-worker`,
          machine: onMachine(machine),
        }),
      );
    }
    for (const copy of [...monitors.values(), ...evacuationWorkers.values()])
      await copy.waitForLog(/^health and metrics server listening/, 300_000);
    // The root namespace's node monitor and evacuation worker step aside: only the machines' act.
    await deployment.run.stack.worker('node-monitor').stop(15_000);
    await deployment.run.stack.worker('evacuation-worker').stop(15_000);
    await waitFor('a machine node monitor to lead', async () => (await leader()) !== null, 60_000, 200);
  });

  after(async () => {
    for (const machine of network?.machines ?? []) network.heal(machine);
    for (const copy of [...monitors.values(), ...evacuationWorkers.values()]) await copy.stop();
    await network?.remove();
    await deployment?.stop();
  });

  /** The machine whose node monitor holds the lease, or null. */
  const leader = async (): Promise<SimulatedMachine | null> => {
    const lease = await LeaderLease.read(deployment.redis, nodeMonitorLeaderKey(deployment.keyPrefix));
    for (const [machine, copy] of monitors) if (lease?.holder.startsWith(`${copy.name}#`)) return machine;
    return null;
  };

  /** Which machines' evacuation workers sent an evacuate for `host`'s servers (from their logs). */
  const evacuatingMachines = (servers: ReadonlyArray<string>) =>
    [...evacuationWorkers.entries()]
      .filter(([, copy]) =>
        copy
          .messages('Evacuation accepted for ')
          .some((record) => servers.some((id) => String(record.msg).includes(id))),
      )
      .map(([machine]) => machine.namespace);

  const victims = () => {
    const hosts = deployment.layout.protectedHosts;
    assert.ok(hosts.length >= 3, 'three protected hosts to kill');
    return hosts;
  };

  it('three evacuation-worker machines share one incident: every instance evacuated once', async (t) => {
    const victim = victims()[0]!;
    const servers = evacuableServers(deployment, victim);
    const killedAt = Date.now();
    deployment.sim.killHost(victim);
    const figures = await hostFigures(deployment, victim, servers);
    const machines = evacuatingMachines(servers);
    t.diagnostic(JSON.stringify({ figures, machines, seconds: (Date.now() - killedAt) / 1000 }));
    recordFaultRow({
      fault: 'three evacuation-worker machines share one incident',
      inFlight: `1 incident (${servers.length} instances)`,
      eventsLost: lostEffects(figures),
      duplicateEffects: duplicateEffects(figures),
      secondsToResume: null,
      outcome: `evacuate calls sent from ${machines.length} machine(s); fenced ${figures.fenced}, evacuated ${figures.evacuated}`,
    });
    assert.equal(lostEffects(figures), 0, 'nothing lost');
    assert.equal(duplicateEffects(figures), 0, 'nothing done twice');
  });

  it('the machine of the node-monitor leader cut off: the standby machine takes over, the cut one stops acting', async (t) => {
    const cut = (await leader())!;
    assert.ok(cut, 'a machine leads');
    const cutMonitor = monitors.get(cut)!;
    const standby = [...monitors].find(([machine]) => machine !== cut)![1];
    const victim = victims()[1]!;
    const servers = evacuableServers(deployment, victim);
    const faultAt = Date.now();
    network.cut(cut);
    deployment.sim.killHost(victim);
    // The standby may have led before (at start-up): only a leadership taken after the cut counts.
    const led = await waitFor(
      'the standby machine to lead after the cut',
      () => standby.messages('this node monitor now leads').find((record) => timeOf(record) >= faultAt),
      60_000,
      100,
    );
    const secondsToTakeOver = (timeOf(led) - faultAt) / 1000;
    const figures = await hostFigures(deployment, victim, servers);
    network.heal(cut);
    const healedAt = Date.now();
    // The healed machine's monitor must find the lease taken and act no more.
    await waitFor(
      'three standby poll cycles after the heal',
      () =>
        standby.messages('Poll cycle completed').filter((record) => timeOf(record) > healedAt).length >= 3,
      60_000,
      200,
    );
    const actedWhileDeposed = cutMonitor
      .messages('host.down published')
      .filter((record) => timeOf(record) > faultAt).length;
    const final = await hostFigures(deployment, victim, servers, 0);
    t.diagnostic(JSON.stringify({ secondsToTakeOver, figures: final, actedWhileDeposed }));
    recordFaultRow({
      fault: 'machine of the node-monitor leader cut off',
      inFlight: `1 incident (${servers.length} instances), 2 node monitors, 3 evacuation workers`,
      eventsLost: lostEffects(final),
      duplicateEffects: duplicateEffects(final),
      secondsToResume: Math.round(secondsToTakeOver * 10) / 10,
      outcome: `standby machine led after ${secondsToTakeOver.toFixed(1)} s; cut leader published ${actedWhileDeposed} host.down after the cut`,
    });
    assert.deepEqual(final, figures, 'nothing changed once the cut machine came back');
    assert.equal(lostEffects(final), 0, 'nothing lost');
    assert.equal(duplicateEffects(final), 0, 'nothing done twice');
    assert.equal(actedWhileDeposed, 0, 'the cut leader published nothing');
    assert.notEqual(await leader(), cut, 'the lease stays with the standby machine');
  });

  it("the machine whose evacuation worker owns the incident's host job cut off: the others take its jobs over after the lock time", async (t) => {
    const victim = victims()[2]!;
    const servers = evacuableServers(deployment, victim);
    deployment.sim.killHost(victim);
    const started = await waitFor(
      `an evacuation worker to start ${victim}'s host job`,
      () => {
        for (const [machine, copy] of evacuationWorkers) {
          const record = copy.messages(`Safety checks passed for ${victim}`)[0];
          if (record) return { machine, record };
        }
        return undefined;
      },
      60_000,
      50,
    );
    const faultAt = Date.now();
    network.cut(started.machine);
    const figures = await hostFigures(deployment, victim, servers, 180_000);
    const secondsToFinish = (Date.now() - faultAt) / 1000;
    network.heal(started.machine);
    const healedAt = Date.now();
    // Give the healed worker time to send whatever it held back.
    await waitFor(
      'the healed worker to answer again',
      () =>
        evacuationWorkers
          .get(started.machine)!
          .records()
          .some((record) => timeOf(record) > healedAt),
      30_000,
      200,
    ).catch(() => undefined);
    await sleep(JOB_LOCK_MILLISECONDS);
    const final = await hostFigures(deployment, victim, servers, 0);
    const machines = evacuatingMachines(servers);
    t.diagnostic(
      JSON.stringify({ owner: started.machine.namespace, machines, figures: final, secondsToFinish }),
    );
    recordFaultRow({
      fault: 'machine of the evacuation worker owning the host job cut off',
      inFlight: `1 incident (${servers.length} instances), 3 evacuation workers`,
      eventsLost: lostEffects(final),
      duplicateEffects: duplicateEffects(final),
      secondsToResume: Math.round(secondsToFinish * 10) / 10,
      outcome: `host evacuated ${secondsToFinish.toFixed(1)} s after the cut (job lock ${JOB_LOCK_MILLISECONDS / 1000} s); evacuate calls from ${machines.length} machine(s)`,
    });
    assert.equal(lostEffects(final), 0, 'nothing lost');
    assert.equal(duplicateEffects(final), 0, 'nothing done twice');
    assert.deepEqual(final, figures, 'nothing changed once the cut machine came back');
  });
});
