import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LifeguardEvent } from '@lifeguard/contracts';
import type { StackOptions } from '@lifeguard/stack';
import { DEMO_EVACUABLE_TAG } from '@lifeguard/stack';
import { createTestVhost, FAST_CLOUD_TIMINGS, FAST_INSTANCE_HA, waitFor } from '@lifeguard/testing';
import { EventTimeline } from '../../e2e/support/event-timeline.ts';
import { StackRun } from '../../e2e/support/stack-run.ts';
import { recordFaultRow } from './fault-table.ts';
import { INCIDENT_CHAIN } from './incident-figures.ts';

/** What a failover did: when the engine's node was killed and when the engine served again. */
export interface Failover {
  readonly killedAt: number;
  readonly servingAgainAt: number;
  /** The engine's own name for what happened: "master 127.0.0.1:7001 killed, replica 7004 promoted". */
  readonly description: string;
}

/** What the test counted after the incident. */
export interface IncidentAcrossFailover {
  readonly incidentId: string;
  readonly evacuableServers: number;
  /** Chain events that never arrived for the incident. */
  readonly eventsLost: number;
  /** host.fenced published more than once, plus evacuate calls beyond one per server (cloud-sim's count). */
  readonly duplicateEffects: number;
  /** From the engine serving again to the incident's next published event, seconds. */
  readonly secondsToResume: number | null;
  /** Worker log lines at warn or above that name the engine (what the operator sees in the logs). */
  readonly warnings: number;
  readonly failover: Failover;
}

/** Where the stack's RabbitMQ is when the test brings its own (a cluster), rather than a test vhost. */
export interface OwnRabbitmq {
  /** LIFEGUARD_AMQP_URL: one address, or the cluster's comma-separated list. */
  readonly url: string;
  /** One address for the event timeline's connection (a node the test does not kill). */
  readonly timelineUrl: string;
}

/**
 * Runs lifeguard as `npm start` does (every worker its own process, cloud-sim with the demo layout,
 * Nova's timings shortened) on the given Redis (and RabbitMQ: a test vhost unless `rabbitmq` is
 * given), calls `prepare` once the stack runs, kills a protected host, and calls `strike` once the
 * node monitor has published host.down (the incident is open, its fence job queued): `strike` kills
 * a node of Redis or RabbitMQ and resolves when the engine serves again. Then waits for the incident
 * to end (host.reenabled) and counts, from the events exchange and cloud-sim's record, what was lost
 * and what was done twice; worker log lines at warn or above matching `warningPattern` (default: ones
 * naming Redis) are counted. Stops everything it started.
 */
export async function incidentAcrossFailover(options: {
  readonly label: string;
  readonly keyPrefix: string;
  readonly redisUrl: string;
  readonly redisTopology?: StackOptions['redisTopology'];
  readonly rabbitmq?: OwnRabbitmq;
  readonly prepare?: (run: StackRun) => Promise<void>;
  readonly strike: () => Promise<Failover>;
  readonly warningPattern?: RegExp;
}): Promise<IncidentAcrossFailover> {
  const vhost = options.rabbitmq ? null : await createTestVhost(options.label);
  const timeline = await EventTimeline.start(options.rabbitmq?.timelineUrl ?? vhost!.url);
  const warningPattern = options.warningPattern ?? /redis|cluster|sentinel|ECONNREFUSED/i;
  let run: StackRun | null = null;
  try {
    run = await StackRun.start({
      amqpUrl: options.rabbitmq?.url ?? vhost!.url,
      redisUrl: options.redisUrl,
      ...(options.redisTopology ? { redisTopology: options.redisTopology } : {}),
      keyPrefix: options.keyPrefix,
      cloud: {
        kind: 'simulated',
        hosts: 8,
        ...FAST_CLOUD_TIMINGS,
      },
      instanceHa: { ...FAST_INSTANCE_HA },
    });
    await options.prepare?.(run);
    const sim = run.stack.cloudSim!;
    const source = run.stack.layout!.protectedHosts[0]!;
    const evacuable = sim.model.servers.onHost(source).filter((server) => {
      const image = sim.model.images.get(server.imageId);
      return (
        server.flavor.extra_specs[DEMO_EVACUABLE_TAG] === 'true' ||
        (image?.tags.includes(DEMO_EVACUABLE_TAG) ?? false)
      );
    });
    assert.ok(evacuable.length > 0, 'the host runs evacuable servers');
    sim.killHost(source);
    const down = await timeline.waitFor('host.down', (event) => event.data.host === source, 60_000);
    const incidentId = down.data.incidentId;
    const failover = await options.strike();
    await timeline.waitFor(
      'host.reenabled',
      (event) => event.data.host === source && event.data.incidentId === incidentId,
      300_000,
    );
    await waitFor('every evacuable server ACTIVE on another host', () =>
      evacuable.every((server) => {
        const now = sim.model.servers.get(server.id);
        return now?.host !== source && now?.vmState === 'active';
      }),
    );
    const events = timeline.forIncident(incidentId);
    const count = (type: string) => events.filter((event) => event.type === type).length;
    const eventsLost = INCIDENT_CHAIN.filter((type) => count(type) === 0).length;
    const extraEvacuations = evacuable.reduce(
      (sum, server) => sum + Math.max(0, sim.evacuateCalls(server.id) - 1),
      0,
    );
    const duplicateEffects = Math.max(0, count('host.fenced') - 1) + extraEvacuations;
    const after = events.find(
      (event: LifeguardEvent) => timeline.receivedAt(event) >= failover.servingAgainAt,
    );
    const warnings = run.lines.filter((line) => {
      const level = Number(line.record?.level ?? 0);
      return level >= 40 && warningPattern.test(line.text);
    }).length;
    return {
      incidentId,
      evacuableServers: evacuable.length,
      eventsLost,
      duplicateEffects,
      secondsToResume: after ? (timeline.receivedAt(after) - failover.servingAgainAt) / 1000 : null,
      warnings,
      failover,
    };
  } catch (error) {
    // What every worker logged goes with the failure: a stalled incident is read from these lines.
    if (run) {
      const file = join(mkdtempSync(join(tmpdir(), `lifeguard-${options.label}-`)), 'workers.log');
      writeFileSync(file, run.lines.map((line) => `${line.worker} ${line.text}`).join('\n'));
      throw new Error(`${(error as Error).message} (every worker's log lines: ${file})`, { cause: error });
    }
    throw error;
  } finally {
    await run?.stop();
    await timeline.close();
    await vhost?.delete();
  }
}

/**
 * Prints the failover's figures as test diagnostics, records the fault's row and asserts what every
 * row expects: no event of the incident lost, one fence and one evacuation per server. `engine` names
 * the engine the counted warnings are about (default Redis); `note` is added to the row's outcome.
 */
export function reportFailover(
  diagnostic: (message: string) => void,
  fault: string,
  result: IncidentAcrossFailover,
  { engine = 'Redis', note }: { readonly engine?: string; readonly note?: string } = {},
): void {
  const failoverSeconds = (result.failover.servingAgainAt - result.failover.killedAt) / 1000;
  diagnostic(`${result.failover.description} in ${failoverSeconds.toFixed(1)} s`);
  diagnostic(
    `lost ${result.eventsLost}, duplicates ${result.duplicateEffects}, resumed ${result.secondsToResume} s after, ${result.warnings} ${engine} warnings`,
  );
  recordFaultRow({
    fault,
    inFlight: `1 incident (${result.evacuableServers} evacuable servers), failover ${failoverSeconds.toFixed(1)} s`,
    eventsLost: result.eventsLost,
    duplicateEffects: result.duplicateEffects,
    secondsToResume: result.secondsToResume,
    outcome: `incident ends normally; ${result.warnings} worker log lines at warn+ naming ${engine}${note ? `; ${note}` : ''}`,
  });
  assert.equal(result.eventsLost, 0, 'every event of the incident was published');
  assert.equal(result.duplicateEffects, 0, 'one fence, one evacuation per server');
}
