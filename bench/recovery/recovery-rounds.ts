// The rounds of the recovery benchmark (recovery.real-nova.bench.ts): one kill of a compute, timed from
// the kill to each phase, for the floor (the bench reacting itself at Nova's down verdict) and for
// lifeguard (its events and Nova's state), and the statistics the benchmark prints.
import { randomUUID } from 'node:crypto';
import { sleep, waitFor } from '@lifeguard/testing';
import { allActiveElsewhere, type NovaSample, type NovaWatch } from '../../test/e2e/support/nova-watch.ts';
import type { realNova } from '../../test/e2e/support/real-nova.ts';
import type { RealNovaDeployment } from '../../test/e2e/support/real-nova-deployment.ts';
import type { BenchHostAgents } from './bench-host-agents.ts';

type Nova = ReturnType<typeof realNova>;

/** Seconds from the kill to each phase of one lifeguard round (null: the phase was not seen). */
export interface Round {
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

/** Seconds from the kill to each phase of one floor round. */
export interface FloorRound {
  novaDown: number;
  forcedDown: number;
  firstRebuild: number | null;
  allActive: number | null;
}

export const seconds = (from: number, to: number | null) => (to === null ? null : (to - from) / 1000);

export function statistics(values: ReadonlyArray<number | null>) {
  const known = values.filter((value): value is number => value !== null).sort((a, b) => a - b);
  if (known.length === 0) return null;
  const middle = Math.floor(known.length / 2);
  const median = known.length % 2 ? known[middle]! : (known[middle - 1]! + known[middle]!) / 2;
  return { min: known[0]!, median, max: known[known.length - 1]!, count: known.length };
}

export function row(label: string, values: ReadonlyArray<number | null>): string {
  const stats = statistics(values);
  const cell = (value: number | undefined) => (value === undefined ? '—' : value.toFixed(2)).padStart(8);
  const missing = stats && stats.count < values.length ? `  (seen in ${stats.count}/${values.length})` : '';
  return `${label.padEnd(52)}${cell(stats?.min)}${cell(stats?.median)}${cell(stats?.max)}${missing}`;
}

/** Boots `count` servers on `host` and waits until they are ACTIVE; returns their ids (none left on failure). */
export async function bootServers(nova: Nova, host: string, count: number): Promise<string[]> {
  const tag = randomUUID().slice(0, 6);
  const ids: string[] = [];
  try {
    for (let index = 0; index < count; index++) ids.push(await nova.boot(`bench-${tag}-${index}`, host));
  } catch (error) {
    await nova.deleteServers(ids);
    throw error;
  }
  return ids;
}

/**
 * SIGKILLs the host's nova-compute, and its host agent when `agents` are given, at the same instant, at
 * a random moment of the longer of the report and heartbeat periods; returns the kill time.
 */
export async function killCompute(
  nova: Nova,
  host: string,
  periodSeconds: number,
  agents: BenchHostAgents | null = null,
): Promise<number> {
  await sleep(Math.random() * periodSeconds * 1000);
  const pid = await nova.computePid(host);
  if (pid === null) throw new Error(`${host}'s nova-compute is not running`);
  const killedAt = Date.now();
  process.kill(pid, 'SIGKILL');
  agents?.kill(host);
  return killedAt;
}

const service = (sample: NovaSample, host: string) => sample.services.find((each) => each.host === host);
const rebuilding = (sample: NovaSample, ids: ReadonlyArray<string>) =>
  sample.servers.some((server) => ids.includes(server.id) && server['OS-EXT-STS:task_state'] !== null);

/** One floor round: kill, react at Nova's own down verdict with the fewest calls, time it. */
export async function floorRound(
  nova: Nova,
  watch: NovaWatch,
  victim: string,
  ids: ReadonlyArray<string>,
  periodSeconds: number,
): Promise<FloorRound> {
  const killedAt = await killCompute(nova, victim, periodSeconds);
  const downAt = await waitFor(
    `Nova to say ${victim} is down`,
    () => watch.first((sample) => service(sample, victim)?.state === 'down', killedAt) ?? false,
    60_000,
    10,
  );
  const { id } = await nova.service(victim);
  const marked = await nova.nova(
    'PUT',
    `/os-services/${id}`,
    { forced_down: true, status: 'disabled', disabled_reason: 'bench/recovery floor' },
    '2.53',
  );
  if (marked.status !== 200) throw new Error(`force-down of ${victim}: HTTP ${marked.status}`);
  const forcedAt = Date.now();
  const answers = await Promise.all(
    ids.map((server) => nova.nova('POST', `/servers/${server}/action`, { evacuate: {} })),
  );
  const refused = answers.filter((answer) => answer.status !== 200);
  if (refused.length > 0) throw new Error(`evacuate refused: ${JSON.stringify(refused[0]!.body)}`);
  const activeAt = await waitFor(
    'every server ACTIVE elsewhere',
    () => watch.first((sample) => allActiveElsewhere(sample, ids, victim), killedAt) ?? false,
    120_000,
    10,
  );
  return {
    novaDown: seconds(killedAt, downAt)!,
    forcedDown: seconds(killedAt, forcedAt)!,
    firstRebuild: seconds(
      killedAt,
      watch.first((sample) => rebuilding(sample, ids), killedAt),
    ),
    allActive: seconds(killedAt, activeAt),
  };
}

/**
 * One lifeguard round: kill (the compute's host agent too, when `agents` are given), follow lifeguard's
 * events and Nova's state until the host is re-enabled; the host "boots" when lifeguard powered it on:
 * its nova-compute (and agent) start again.
 */
export async function lifeguardRound(
  nova: Nova,
  watch: NovaWatch,
  deployment: RealNovaDeployment,
  round: {
    victim: string;
    ids: ReadonlyArray<string>;
    periodSeconds: number;
    agents: BenchHostAgents | null;
  },
): Promise<Round> {
  const { timeline } = deployment;
  const { victim, ids, agents } = round;
  const killedAt = await killCompute(nova, victim, round.periodSeconds, agents);
  const down = await timeline.waitFor(
    'host.down',
    (event) => event.data.host === victim && Date.parse(event.occurredAt) >= killedAt,
    60_000,
  );
  const incident = (event: { data: { incidentId?: string | null } }) =>
    event.data.incidentId === down.data.incidentId;
  const fenced = await timeline.waitFor('host.fenced', incident, 60_000);
  const poweredOn = await timeline.waitFor('host.powered-on', incident, 120_000);
  const restartedAt = Date.now();
  agents?.start(victim);
  await nova.startCompute(victim);
  const reenabled = await timeline.waitFor('host.reenabled', incident, 180_000);
  return {
    victim,
    novaDown: seconds(
      killedAt,
      watch.first((sample) => {
        const current = service(sample, victim);
        return current?.state === 'down' && !current.forced_down;
      }, killedAt),
    ),
    hostDown: seconds(killedAt, Date.parse(down.occurredAt))!,
    fenced: seconds(killedAt, Date.parse(fenced.occurredAt))!,
    forcedDown: seconds(
      killedAt,
      watch.first((sample) => service(sample, victim)?.forced_down === true, killedAt),
    ),
    firstRebuild: seconds(
      killedAt,
      watch.first((sample) => rebuilding(sample, ids), killedAt),
    ),
    allActive: seconds(
      killedAt,
      watch.first((sample) => allActiveElsewhere(sample, ids, victim), killedAt),
    ),
    poweredOn: seconds(killedAt, Date.parse(poweredOn.occurredAt))!,
    reenabled: seconds(killedAt, Date.parse(reenabled.occurredAt))!,
    restartToReenabled: seconds(restartedAt, Date.parse(reenabled.occurredAt))!,
  };
}
