// Recovery benchmark on real Nova (the project's harness), against the peer InstanceHA agent.
//
// A compute holding servers is SIGKILLed and the chain is timed from the kill: host.down → host.fenced
// → forced_down (seen in Nova) → first server rebuilding → every server ACTIVE on another host (seen
// in Nova) → the host powered on (its nova-compute started again) → host.reenabled. Repeated
// RECOVERY_KILLS times (default 5, rotating over the computes, each kill at a random moment of the
// 2 s heartbeat period) with RECOVERY_SERVERS servers (default 4) on the victim; min / median / max
// per phase.
//
// lifeguard runs as users start it (startStack against the cloud: every worker its own process, real
// RabbitMQ and Redis) with the peer's settings but polling more often: POLL 1 s, DELTA 10 s, noop
// fencing (RECOVERY_FENCING=ipmi: fence_ipmilan against an ipmi_sim BMC per compute), InstanceHA's
// default (traditional) evacuation, in two modes side by side: `nova` (Nova's DELTA is the failure
// signal) and `host-agent` (a lifeguard host agent on every compute, HEARTBEAT_DETECTION with
// HEARTBEAT_DOWN_AFTER 3 s; a kill is then the SIGKILL of the compute's nova-compute and its agent at
// the same instant).
//
// Baseline, measured in the same run before lifeguard starts (same kills, same servers): the floor
// any agent can reach on this Nova under this machine's load — the bench itself watching Nova every
// 100 ms, and at the first sample where Nova says the service is down, forcing it down and disabling
// it in one call and sending every evacuate call at once (the harness's demo.sh path).
// Target (issue 8): every server ACTIVE elsewhere no later than DELTA + 3 s after the kill.
// The peer: the upstream InstanceHA agent (openstack-k8s-operators/infra-operator,
// templates/instanceha/bin/instanceha.py, unmodified; POLL 15 s, its minimum, DELTA 10 s, noop
// fencing) on the same harness, eight kills measured here (not in this run), reached all-ACTIVE in
// 12.80 / 24.12 / 28.38 s (min / median / max). It decides only at a poll, so its detection is DELTA
// plus up to one POLL after the service goes silent (about 10 to 25 s): a kill that lands just after
// a poll costs a whole extra poll. A median of a few kills says little; the spread is the figure.
//
// Settings: RECOVERY_KILLS (8; 1 in smoke mode), RECOVERY_SERVERS (4; 1 in smoke mode),
// RECOVERY_FENCING (noop or ipmi),
// BENCH_TIME_LIMIT_SECONDS (1800; 300 in smoke mode). Smoke mode: BENCH_SMOKE=1 or --smoke.
// Run: npm run bench -- recovery [--smoke]   (starts the harness when none runs in RN_STATE)
import { closedPort } from '@lifeguard/testing';
import { NovaWatch } from '../../test/e2e/support/nova-watch.ts';
import { realNova } from '../../test/e2e/support/real-nova.ts';
import { RealNovaDeployment } from '../../test/e2e/support/real-nova-deployment.ts';
import { BenchRun, SMOKE, setting } from '../support/bench-run.ts';
import { BenchHostAgents } from './bench-host-agents.ts';
import {
  bootServers,
  type FloorRound,
  floorRound,
  lifeguardRound,
  type Round,
  row,
  statistics,
} from './recovery-rounds.ts';

const KILLS = setting('RECOVERY_KILLS', 8, 1);
const SERVERS = setting('RECOVERY_SERVERS', 4, 1);
const FENCING = fencingSetting();
const POLL_SECONDS = 1;
const DELTA_SECONDS = 10;
const HEARTBEAT_DOWN_AFTER_SECONDS = 3;
const REPORT_INTERVAL_SECONDS = Number(process.env.RN_REPORT_INTERVAL ?? 2);
const TARGET_SECONDS = DELTA_SECONDS + 3;
/** The host-agent mode's goal: median and worst all-ACTIVE seconds over the kills (noop fencing). */
const HOST_AGENT_GOAL = { median: 6, max: 8 };
/** InstanceHA's all-ACTIVE seconds over eight kills on this harness (min / median / max). */
const PEER = { min: 12.8, median: 24.12, max: 28.38, kills: 8 };
const bench = new BenchRun('the recovery benchmark', SMOKE ? 600 : 3600);

type Mode = 'nova' | 'host-agent';

/** RECOVERY_FENCING: noop (default) or ipmi. @throws Error naming the variable for another value */
function fencingSetting(): 'noop' | 'ipmi' {
  const raw = process.env.RECOVERY_FENCING ?? 'noop';
  if (raw === 'noop' || raw === 'ipmi') return raw;
  throw new Error(`RECOVERY_FENCING must be noop or ipmi; got ${JSON.stringify(raw)}`);
}

/** The floor's rounds: the bench itself reacting at Nova's down verdict. */
async function floorRounds(nova: ReturnType<typeof realNova>, watch: NovaWatch): Promise<FloorRound[]> {
  const floor: FloorRound[] = [];
  for (let kill = 0; kill < KILLS; kill++) {
    const victim = nova.hosts[kill % nova.hosts.length]!;
    bench.phase(`booting ${SERVERS} server(s) on ${victim} (floor ${kill + 1})`);
    const ids = await bootServers(nova, victim, SERVERS);
    const deleteServers = bench.resource(`servers ${ids.join(', ')}`, () => nova.deleteServers(ids));
    try {
      bench.phase(
        `floor round ${kill + 1}: waiting for Nova to say ${victim} is down and its servers ACTIVE elsewhere`,
      );
      const round = await floorRound(nova, watch, victim, ids, REPORT_INTERVAL_SECONDS);
      floor.push(round);
      process.stdout.write(
        `floor ${kill + 1}/${KILLS} ${victim}: Nova says down ${round.novaDown.toFixed(2)} s, forced_down ${round.forcedDown.toFixed(2)} s, all ACTIVE ${round.allActive?.toFixed(2)} s\n`,
      );
    } finally {
      await deleteServers();
      await nova.restore();
    }
  }
  return floor;
}

/** lifeguard's rounds in one mode, with its own deployment (and host agents in `host-agent` mode). */
async function modeRounds(nova: ReturnType<typeof realNova>, watch: NovaWatch, mode: Mode): Promise<Round[]> {
  const agents = mode === 'host-agent' ? new BenchHostAgents(await closedPort()) : null;
  const stopAgents = agents
    ? bench.resource('the host agents', async () => agents.stop())
    : async () => undefined;
  const rounds: Round[] = [];
  try {
    for (const host of nova.hosts) agents?.start(host);
    bench.phase(`starting lifeguard against the harness (${mode} mode)`);
    const deployment = await RealNovaDeployment.start({
      label: `bench-recovery-${mode}`,
      fencing: FENCING,
      instanceHa: {
        POLL: POLL_SECONDS,
        DELTA: DELTA_SECONDS,
        ...(mode === 'host-agent'
          ? {
              CHECK_HEARTBEAT: true,
              HEARTBEAT_DETECTION: true,
              HEARTBEAT_TIMEOUT: 30,
              HEARTBEAT_DOWN_AFTER: HEARTBEAT_DOWN_AFTER_SECONDS,
              NOVA_REPORT_INTERVAL: REPORT_INTERVAL_SECONDS,
            }
          : {}),
      },
      nodeMonitorEnvironment: agents?.nodeMonitorEnvironment() ?? {},
      logLevel: 'info',
    });
    const stopDeployment = bench.resource(`the lifeguard workers (${mode} mode)`, () => deployment.stop());
    try {
      for (let kill = 0; kill < KILLS; kill++) {
        const victim = nova.hosts[kill % nova.hosts.length]!;
        bench.phase(`booting ${SERVERS} server(s) on ${victim} (${mode} ${kill + 1})`);
        const ids = await bootServers(nova, victim, SERVERS);
        const deleteServers = bench.resource(`servers ${ids.join(', ')}`, () => nova.deleteServers(ids));
        try {
          bench.phase(
            `${mode} round ${kill + 1}: waiting for ${victim} to be fenced, evacuated and re-enabled`,
          );
          const period = Math.max(REPORT_INTERVAL_SECONDS, 1);
          const round = await lifeguardRound(nova, watch, deployment, {
            victim,
            ids,
            periodSeconds: period,
            agents,
          });
          rounds.push(round);
          process.stdout.write(
            `lifeguard ${mode} ${kill + 1}/${KILLS} ${victim}: down ${round.hostDown.toFixed(2)} s, fenced ${round.fenced.toFixed(2)} s, forced_down ${round.forcedDown?.toFixed(2)} s, all ACTIVE ${round.allActive?.toFixed(2)} s, re-enabled ${round.reenabled.toFixed(2)} s (${round.restartToReenabled.toFixed(2)} s after nova-compute restarted)\n`,
          );
        } finally {
          await deleteServers();
          await nova.restore();
          agents?.start(victim);
        }
      }
    } finally {
      await stopDeployment();
    }
  } finally {
    await stopAgents();
  }
  return rounds;
}

const header = `${'seconds after the SIGKILL'.padEnd(52)}${'min'.padStart(8)}${'median'.padStart(8)}${'max'.padStart(8)}`;
const difference = (a: number | null, b: number | null) => (a === null || b === null ? null : a - b);

/** One mode's table, phase by phase. */
function modeLines(mode: Mode, rounds: ReadonlyArray<Round>): string[] {
  const setting =
    mode === 'nova'
      ? `POLL ${POLL_SECONDS} s, DELTA ${DELTA_SECONDS} s`
      : `host agents, HEARTBEAT_DETECTION, HEARTBEAT_DOWN_AFTER ${HEARTBEAT_DOWN_AFTER_SECONDS} s, NOVA_REPORT_INTERVAL ${REPORT_INTERVAL_SECONDS} s, POLL ${POLL_SECONDS} s, DELTA ${DELTA_SECONDS} s`;
  const of = (pick: (round: Round) => number | null) => rounds.map(pick);
  return [
    '',
    `lifeguard, ${mode} mode: ${setting}, ${FENCING} fencing, traditional evacuation, startStack`,
    header,
    row(
      'Nova says down (seen, before any forced_down)',
      of((round) => round.novaDown),
    ),
    row(
      'host.down published',
      of((round) => round.hostDown),
    ),
    row(
      `host.fenced (${FENCING})`,
      of((round) => round.fenced),
    ),
    row(
      'forced_down (seen in Nova)',
      of((round) => round.forcedDown),
    ),
    row(
      'first server rebuilding (seen in Nova)',
      of((round) => round.firstRebuild),
    ),
    row(
      'every server ACTIVE on another host (seen in Nova)',
      of((round) => round.allActive),
    ),
    row(
      'host.powered-on',
      of((round) => round.poweredOn),
    ),
    row(
      'host.reenabled',
      of((round) => round.reenabled),
    ),
    row(
      'nova-compute restarted → host.reenabled',
      of((round) => round.restartToReenabled),
    ),
    row(
      'host.down → forced_down (fence, mark)',
      of((round) => difference(round.forcedDown, round.hostDown)),
    ),
    row(
      'forced_down → first rebuild (plan, evacuate calls)',
      of((round) => difference(round.firstRebuild, round.forcedDown)),
    ),
    row(
      'first rebuild → all ACTIVE (Nova rebuilding)',
      of((round) => difference(round.allActive, round.firstRebuild)),
    ),
  ];
}

/** The line of one mode the issue asks for: `<mode>: all servers ACTIVE min / median / max: a / b / c s`. */
function summaryLine(mode: Mode, rounds: ReadonlyArray<Round>): string {
  const stats = statistics(rounds.map((round) => round.allActive));
  const figures = stats
    ? `${stats.min.toFixed(2)} / ${stats.median.toFixed(2)} / ${stats.max.toFixed(2)}`
    : '— / — / —';
  return `${mode}: all servers ACTIVE min / median / max: ${figures} s`;
}

function report(floor: ReadonlyArray<FloorRound>, results: ReadonlyMap<Mode, Round[]>): string[] {
  const nova = results.get('nova') ?? [];
  const agents = results.get('host-agent') ?? [];
  const ours = statistics(nova.map((round) => round.allActive));
  const withAgents = statistics(agents.map((round) => round.allActive));
  const floorActive = statistics(floor.map((round) => round.allActive));
  const met = (values: ReadonlyArray<number | null>, bound: number) =>
    values.filter((value) => value !== null && value <= bound).length;
  const lines = [
    '',
    `recovery on real Nova: ${KILLS} SIGKILLs of a compute with ${SERVERS} servers each, for the floor and each mode`,
    '',
    'baseline (floor, same run): the bench reacts at the first sample where Nova says down',
    header,
    row(
      'Nova says down (seen)',
      floor.map((round) => round.novaDown),
    ),
    row(
      'forced_down and disabled (one PUT)',
      floor.map((round) => round.forcedDown),
    ),
    row(
      'first server rebuilding (seen in Nova)',
      floor.map((round) => round.firstRebuild),
    ),
    row(
      'every server ACTIVE on another host (seen in Nova)',
      floor.map((round) => round.allActive),
    ),
    ...modeLines('nova', nova),
    ...modeLines('host-agent', agents),
    '',
    summaryLine('nova', nova),
    summaryLine('host-agent', agents),
    `target (nova mode): every server ACTIVE elsewhere ≤ DELTA + 3 = ${TARGET_SECONDS} s: met in ${met(
      nova.map((round) => round.allActive),
      TARGET_SECONDS,
    )}/${nova.length} kills (floor: ${met(
      floor.map((round) => round.allActive),
      TARGET_SECONDS,
    )}/${floor.length})`,
  ];
  if (withAgents) {
    const goalMet = withAgents.median <= HOST_AGENT_GOAL.median && withAgents.max <= HOST_AGENT_GOAL.max;
    const goal = `goal (host-agent mode, noop fencing): median ≤ ${HOST_AGENT_GOAL.median} s and worst ≤ ${HOST_AGENT_GOAL.max} s`;
    const figures = `${withAgents.median.toFixed(2)} / ${withAgents.max.toFixed(2)} s`;
    // The goal is set for noop fencing: a power fence adds the fence agent's own time to every kill.
    lines.push(
      FENCING === 'noop'
        ? `${goal}: ${goalMet ? 'MET' : 'NOT MET'} (${figures})`
        : `${goal}: not judged with ${FENCING} fencing (${figures}; the fence agent's power-off and confirmation are in every kill)`,
    );
  }
  if (ours && withAgents)
    lines.push(
      `host-agent ÷ nova (median): ${(withAgents.median / ours.median).toFixed(2)}; nova − host-agent (median): ${(ours.median - withAgents.median).toFixed(2)} s`,
    );
  if (ours && floorActive) {
    lines.push(
      `all ACTIVE, lifeguard (nova mode) ÷ floor: min ${(ours.min / floorActive.min).toFixed(2)}, median ${(ours.median / floorActive.median).toFixed(2)}, max ${(ours.max / floorActive.max).toFixed(2)}; lifeguard − floor (median): ${(ours.median - floorActive.median).toFixed(2)} s`,
      `peer InstanceHA (upstream agent, POLL 15 s, DELTA 10 s, noop; same harness, ${PEER.kills} kills of an earlier run, not this one): all ACTIVE ${PEER.min.toFixed(2)} / ${PEER.median.toFixed(2)} / ${PEER.max.toFixed(2)} s (min / median / max); lifeguard ÷ peer: min ${(ours.min / PEER.min).toFixed(2)}, median ${(ours.median / PEER.median).toFixed(2)}, max ${(ours.max / PEER.max).toFixed(2)}`,
      '  the peer decides only at a poll: DELTA plus up to one POLL after the service goes silent (about 10 to 25 s), so an unlucky kill costs a whole extra poll',
    );
  }
  return lines;
}

async function main(): Promise<void> {
  const nova = realNova();
  bench.phase('restoring the harness (every compute up and enabled)');
  await nova.restore();
  const restore = bench.resource("the harness's computes (restored up and enabled)", () => nova.restore());
  const watch = new NovaWatch(nova, 100);
  const stopWatch = bench.resource('the Nova watch', () => watch.stop());
  const results = new Map<Mode, Round[]>();
  let floor: FloorRound[] = [];
  try {
    floor = await floorRounds(nova, watch);
    for (const mode of ['nova', 'host-agent'] as const)
      results.set(mode, await modeRounds(nova, watch, mode));
  } finally {
    await stopWatch();
    await restore();
  }
  process.stdout.write(`${report(floor, results).join('\n')}\n`);
}

await bench.run(async () => {
  if (SMOKE) process.stdout.write('smoke run: one kill with one server, the floor and each mode\n');
  await main();
});
