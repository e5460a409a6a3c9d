// Recovery benchmark on real Nova (the project's harness), against the peer InstanceHA agent.
//
// A compute holding servers is SIGKILLed and the chain is timed from the kill: host.down → host.fenced
// → forced_down (seen in Nova) → every server ACTIVE on another host (seen in Nova) → the host powered
// on (its nova-compute started again) → host.reenabled. Repeated RECOVERY_KILLS times (default 5,
// rotating over the computes, each kill at a random moment of the 2 s heartbeat period) with
// RECOVERY_SERVERS servers (default 4) on the victim; min / median / max per phase.
//
// Settings as the peer's measurement, but polling more often: POLL 1 s, DELTA 10 s, noop fencing,
// InstanceHA's default (traditional) evacuation; every lifeguard worker is its own process on real
// RabbitMQ and Redis. Baseline measured in the same run: Nova's own verdict that the service is down
// (its last heartbeat `updated_at` + service_down_time 10 s), which any monitor trusting Nova's
// `state` waits for. Target (issue 8): every server ACTIVE elsewhere no later than DELTA + 3 s.
// The peer (InstanceHA, POLL 15 s, DELTA 10 s, noop fencing, same harness, measured earlier, not in
// this run) reached all-ACTIVE in 10.1 / 10.6 / 13.3 s (min / median / max of three kills).
//
// Run: npm run bench -- recovery   (starts the harness when none runs in RN_STATE)
import { randomUUID } from 'node:crypto';
import { sleep } from '@lifeguard/testing';
import { allActiveElsewhere, type NovaSample, NovaWatch } from '../../test/e2e/support/nova-watch.ts';
import { realNova } from '../../test/e2e/support/real-nova.ts';
import { RealNovaDeployment } from '../../test/e2e/support/real-nova-deployment.ts';

const KILLS = Number(process.env.RECOVERY_KILLS ?? 5);
const SERVERS = Number(process.env.RECOVERY_SERVERS ?? 4);
const POLL_SECONDS = 1;
const DELTA_SECONDS = 10;
const SERVICE_DOWN_TIME_SECONDS = Number(process.env.RN_SERVICE_DOWN_TIME ?? 10);
const REPORT_INTERVAL_SECONDS = Number(process.env.RN_REPORT_INTERVAL ?? 2);
const TARGET_SECONDS = DELTA_SECONDS + 3;
const PEER = { min: 10.1, median: 10.6, max: 13.3 };

/** Seconds from the kill to each phase of one kill (null: the phase was not seen). */
interface Round {
  victim: string;
  novaDown: number | null;
  hostDown: number;
  fenced: number;
  forcedDown: number | null;
  /** The first server seen rebuilding (its evacuation accepted by Nova). */
  firstRebuild: number | null;
  allActive: number | null;
  poweredOn: number;
  reenabled: number;
  /** From the restart of nova-compute to host.reenabled. */
  restartToReenabled: number;
}

const seconds = (from: number, to: number | null) => (to === null ? null : (to - from) / 1000);

/** Nova's `updated_at` (UTC, no zone, whole seconds) as epoch milliseconds. */
function novaTime(value: string | null | undefined): number | null {
  if (!value) return null;
  return Date.parse(/[zZ]|[+-]\d\d:\d\d$/.test(value) ? value : `${value}Z`);
}

function statistics(values: ReadonlyArray<number | null>) {
  const known = values.filter((value): value is number => value !== null).sort((a, b) => a - b);
  if (known.length === 0) return null;
  const middle = Math.floor(known.length / 2);
  const median = known.length % 2 ? known[middle]! : (known[middle - 1]! + known[middle]!) / 2;
  return { min: known[0]!, median, max: known[known.length - 1]!, count: known.length };
}

function row(label: string, values: ReadonlyArray<number | null>): string {
  const stats = statistics(values);
  const cell = (value: number | undefined) => (value === undefined ? '—' : value.toFixed(2)).padStart(8);
  const missing = stats && stats.count < values.length ? `  (seen in ${stats.count}/${values.length})` : '';
  return `${label.padEnd(52)}${cell(stats?.min)}${cell(stats?.median)}${cell(stats?.max)}${missing}`;
}

async function main(): Promise<void> {
  const nova = realNova();
  await nova.restore();
  const deployment = await RealNovaDeployment.start({
    label: 'bench-recovery',
    fencing: 'noop',
    instanceHa: { POLL: POLL_SECONDS, DELTA: DELTA_SECONDS },
    logLevel: 'info',
  });
  const watch = new NovaWatch(nova, 100);
  const rounds: Round[] = [];
  const { timeline } = deployment;
  try {
    for (let kill = 0; kill < KILLS; kill++) {
      const victim = nova.hosts[kill % nova.hosts.length]!;
      const tag = randomUUID().slice(0, 6);
      const ids: string[] = [];
      for (let index = 0; index < SERVERS; index++)
        ids.push(await nova.boot(`bench-${tag}-${index}`, victim));
      await sleep(Math.random() * REPORT_INTERVAL_SECONDS * 1000);
      const pid = await nova.computePid(victim);
      if (pid === null) throw new Error(`${victim}'s nova-compute is not running`);
      const before = watch.samples.at(-1);
      const killedAt = Date.now();
      process.kill(pid, 'SIGKILL');

      const down = await timeline.waitFor(
        'host.down',
        (event) => event.data.host === victim && Date.parse(event.occurredAt) >= killedAt,
        60_000,
      );
      const incident = (event: { data: { incidentId?: string | null } }) =>
        event.data.incidentId === down.data.incidentId;
      const fenced = await timeline.waitFor('host.fenced', incident, 60_000);
      const poweredOn = await timeline.waitFor('host.powered-on', incident, 120_000);
      // noop fencing powers nothing on: the host "boots" now, its nova-compute starts again.
      const restartedAt = Date.now();
      await nova.startCompute(victim);
      const reenabled = await timeline.waitFor('host.reenabled', incident, 180_000);

      const service = (sample: NovaSample) => sample.services.find((each) => each.host === victim);
      const lastHeartbeat = novaTime(before ? service(before)?.updated_at : null);
      const round: Round = {
        victim,
        novaDown:
          lastHeartbeat === null ? null : seconds(killedAt, lastHeartbeat + SERVICE_DOWN_TIME_SECONDS * 1000),
        hostDown: seconds(killedAt, Date.parse(down.occurredAt))!,
        fenced: seconds(killedAt, Date.parse(fenced.occurredAt))!,
        forcedDown: seconds(
          killedAt,
          watch.first((sample) => service(sample)?.forced_down === true, killedAt),
        ),
        firstRebuild: seconds(
          killedAt,
          watch.first(
            (sample) =>
              sample.servers.some(
                (server) => ids.includes(server.id) && server['OS-EXT-STS:task_state'] !== null,
              ),
            killedAt,
          ),
        ),
        allActive: seconds(
          killedAt,
          watch.first((sample) => allActiveElsewhere(sample, ids, victim), killedAt),
        ),
        poweredOn: seconds(killedAt, Date.parse(poweredOn.occurredAt))!,
        reenabled: seconds(killedAt, Date.parse(reenabled.occurredAt))!,
        restartToReenabled: seconds(restartedAt, Date.parse(reenabled.occurredAt))!,
      };
      rounds.push(round);
      process.stdout.write(
        `kill ${kill + 1}/${KILLS} ${victim}: down ${round.hostDown.toFixed(2)} s, fenced ${round.fenced.toFixed(2)} s, forced_down ${round.forcedDown?.toFixed(2)} s, all ACTIVE ${round.allActive?.toFixed(2)} s, re-enabled ${round.reenabled.toFixed(2)} s (${round.restartToReenabled.toFixed(2)} s after nova-compute restarted)\n`,
      );
      await nova.deleteServers(ids);
      await nova.restore();
    }
  } finally {
    await watch.stop();
    await deployment.stop();
    await nova.restore();
  }

  const allActive = rounds.map((round) => round.allActive);
  const baseline = statistics(rounds.map((round) => round.novaDown));
  const ours = statistics(allActive);
  const lines = [
    '',
    `recovery on real Nova: ${rounds.length} SIGKILLs of a compute with ${SERVERS} servers; POLL ${POLL_SECONDS} s, DELTA ${DELTA_SECONDS} s, noop fencing, traditional evacuation`,
    `${'seconds after the SIGKILL'.padEnd(52)}${'min'.padStart(8)}${'median'.padStart(8)}${'max'.padStart(8)}`,
    row(
      'baseline: Nova says down (updated_at + down_time)',
      rounds.map((round) => round.novaDown),
    ),
    row(
      'host.down published',
      rounds.map((round) => round.hostDown),
    ),
    row(
      'host.fenced (noop)',
      rounds.map((round) => round.fenced),
    ),
    row(
      'forced_down (seen in Nova)',
      rounds.map((round) => round.forcedDown),
    ),
    row(
      'first server rebuilding (seen in Nova)',
      rounds.map((round) => round.firstRebuild),
    ),
    row('every server ACTIVE on another host (seen in Nova)', allActive),
    row(
      'host.powered-on',
      rounds.map((round) => round.poweredOn),
    ),
    row(
      'host.reenabled',
      rounds.map((round) => round.reenabled),
    ),
    row(
      'nova-compute restarted → host.reenabled',
      rounds.map((round) => round.restartToReenabled),
    ),
    row(
      '  of which: SIGKILL → host.down (detection)',
      rounds.map((round) => round.hostDown),
    ),
    row(
      '  host.down → forced_down (fence, mark)',
      rounds.map((round) => (round.forcedDown === null ? null : round.forcedDown - round.hostDown)),
    ),
    row(
      '  forced_down → first rebuild (plan, evacuate calls)',
      rounds.map((round) =>
        round.forcedDown === null || round.firstRebuild === null
          ? null
          : round.firstRebuild - round.forcedDown,
      ),
    ),
    row(
      '  first rebuild → all ACTIVE (Nova rebuilding)',
      rounds.map((round) =>
        round.firstRebuild === null || round.allActive === null ? null : round.allActive - round.firstRebuild,
      ),
    ),
    row(
      'all ACTIVE − baseline (lifeguard after Nova says down)',
      rounds.map((round) =>
        round.allActive === null || round.novaDown === null ? null : round.allActive - round.novaDown,
      ),
    ),
    '',
    `target: every server ACTIVE elsewhere ≤ DELTA + 3 = ${TARGET_SECONDS} s: met in ${allActive.filter((value) => value !== null && value <= TARGET_SECONDS).length}/${rounds.length} kills`,
  ];
  if (ours && baseline) {
    lines.push(
      `all ACTIVE ÷ baseline (median): ${(ours.median / baseline.median).toFixed(2)}`,
      `peer InstanceHA (POLL 15 s, DELTA 10 s, noop; same harness, earlier run): all ACTIVE ${PEER.min} / ${PEER.median} / ${PEER.max} s; lifeguard ÷ peer: min ${(ours.min / PEER.min).toFixed(2)}, median ${(ours.median / PEER.median).toFixed(2)}, max ${(ours.max / PEER.max).toFixed(2)}`,
    );
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

await main();
