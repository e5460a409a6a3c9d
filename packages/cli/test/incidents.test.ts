import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createEvent, type LifeguardEvent } from '@lifeguard/contracts';
import { type Incident, IncidentStore } from '@lifeguard/instance-ha';
import { EventJournal } from '@lifeguard/runtime';
import { deleteKeysWithPrefix, randomKeyPrefix, testRedis } from '@lifeguard/testing';
import { renderEvents } from '../src/commands/events.ts';
import { renderIncident } from '../src/commands/incidents.ts';
import { lifeguard } from './support/cli-harness.ts';

const evidence = {
  serviceId: 'service-7',
  state: 'down',
  status: 'enabled',
  forcedDown: false,
  updatedAt: '2026-11-30T08:14:02Z',
  ageSeconds: 60,
  disabledReason: null,
  zone: 'nova',
};

describe('lifeguard incidents / incident <id>', () => {
  const prefix = randomKeyPrefix('cli-incidents');
  const redis = testRedis();
  const store = new IncidentStore(redis, prefix);
  const journal = new EventJournal(redis, prefix);
  const env = { LIFEGUARD_REDIS_KEY_PREFIX: prefix };
  const openedAt = new Date('2026-11-30T08:15:02.000Z');
  let evacuated: Incident;
  let closed: Incident;

  before(async () => {
    evacuated = (
      await store.openIncident({
        host: 'compute-7',
        serviceId: 'service-7',
        fencingToken: 3,
        kdumpFenced: false,
        evidence,
        now: openedAt,
      })
    ).incident;
    await store.recordFence(evacuated.id, {
      proof: 'power-off-confirmed',
      method: 'fence_redfish',
      at: '2026-11-30T08:15:04.250Z',
      by: null,
      note: null,
    });
    await store.setState(evacuated.id, 'evacuating');
    const source = { service: 'fencing-worker', instance: 'fencer-1' };
    const at = (seconds: number) => new Date(openedAt.getTime() + seconds * 1000);
    const events: LifeguardEvent[] = [
      createEvent(
        'host.down',
        {
          host: 'compute-7',
          incidentId: evacuated.id,
          fencingToken: 3,
          evidence,
          kdumpFenced: false,
          resume: false,
        },
        { service: 'node-monitor', instance: 'monitor-a' },
        at(0.125),
      ),
      createEvent(
        'host.fenced',
        {
          host: 'compute-7',
          incidentId: evacuated.id,
          proof: 'power-off-confirmed',
          method: 'fence_redfish',
          attempts: 1,
          durationSeconds: 2.1,
        },
        source,
        at(2.25),
      ),
      createEvent(
        'host.evacuated',
        {
          host: 'compute-7',
          incidentId: evacuated.id,
          mode: 'smart',
          evacuatedInstances: ['a', 'b'],
          durationSeconds: 9,
          poweredOn: true,
        },
        { service: 'evacuation-worker', instance: 'evacuator-1' },
        at(11.5),
      ),
    ];
    // Journalled out of order: the timeline sorts by time.
    for (const event of [events[2]!, events[0]!, events[1]!]) await journal.record(event);

    closed = (
      await store.openIncident({
        host: 'compute-2',
        serviceId: 'service-2',
        fencingToken: 1,
        kdumpFenced: false,
        evidence: { ...evidence, serviceId: 'service-2' },
        now: new Date('2026-11-29T10:00:00Z'),
      })
    ).incident;
    closed = await store.close(closed.id, 'reenabled');
  });

  after(async () => {
    await deleteKeysWithPrefix(redis, prefix);
    await redis.quit();
  });

  it('lists open and recent incidents, newest first', async () => {
    const run = await lifeguard(['incidents'], env);
    assert.equal(run.code, 0, run.stderr);
    const lines = run.stdout.trim().split('\n');
    assert.match(lines[0]!, /^INCIDENT\s+HOST\s+STATE\s+OPENED\s+FENCE\s+CLOSED\s+OUTCOME$/);
    assert.match(
      lines[1]!,
      new RegExp(
        `^${evacuated.id.replace(/\./g, '\\.')}\\s+compute-7\\s+evacuating\\s+2026-11-30 08:15:02Z \\(.+ ago\\)\\s+power-off-confirmed \\(fence_redfish\\)\\s+-\\s+-$`,
      ),
    );
    assert.match(lines[2]!, /compute-2\s+closed\s+.+\s+-\s+2026-\d\d-\d\d \d\d:\d\d:\d\dZ\s+reenabled$/);
    assert.equal(lines.length, 3);
  });

  it('--open leaves the closed ones out; --json gives the records', async () => {
    const open = await lifeguard(['incidents', '--open', '--json'], env);
    assert.equal(open.code, 0, open.stderr);
    assert.deepEqual(
      open.json<Incident[]>().map((incident) => [incident.id, incident.state, incident.fence?.method]),
      [[evacuated.id, 'evacuating', 'fence_redfish']],
    );
    const all = await lifeguard(['incidents', '--json', '--limit', '5'], env);
    assert.deepEqual(
      all.json<Incident[]>().map((incident) => incident.id),
      [evacuated.id, closed.id],
    );
  });

  it("shows one incident with its fence proof and a timeline relative to the incident's opening", async () => {
    const run = await lifeguard(['incident', evacuated.id], env);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^state:\s+evacuating$/m);
    assert.match(run.stdout, /^fencing token:\s+3$/m);
    assert.match(
      run.stdout,
      /^evidence:\s+state=down status=enabled forced_down=false updated_at=2026-11-30T08:14:02Z age=60 s$/m,
    );
    assert.match(
      run.stdout,
      /^Fence proof\nproof:\s+power-off-confirmed\nmethod:\s+fence_redfish\nat:\s+2026-11-30 08:15:04Z$/m,
    );
    const timelineLines = run.stdout.split('Timeline\n')[1]!.trim().split('\n');
    assert.match(timelineLines[0]!, /^AFTER OPENING\s+EVENT\s+FROM\s+DETAILS$/);
    assert.match(
      timelineLines[1]!,
      /^\+0\.125 s\s+host\.down\s+node-monitor monitor-a\s+fencingToken=3 evidence=\{8 fields\} kdumpFenced=false resume=false$/,
    );
    assert.match(
      timelineLines[2]!,
      /^\+2\.250 s\s+host\.fenced\s+fencing-worker fencer-1\s+proof=power-off-confirmed method=fence_redfish attempts=1 durationSeconds=2\.1$/,
    );
    assert.match(
      timelineLines[3]!,
      /^\+11\.500 s\s+host\.evacuated\s+evacuation-worker evacuator-1\s+mode=smart evacuatedInstances=\[a,b\]/,
    );
    assert.equal(timelineLines.length, 4);
  });

  it('lists the servers left on the host with the reason and the rule, in a section of their own', () => {
    const skipped = createEvent(
      'instance.evacuation.skipped',
      {
        host: evacuated.host,
        incidentId: evacuated.id,
        instanceId: 'server-lb',
        instanceName: 'amphora-1',
        reason: 'tag',
        detail: 'tag "amphora" is in SKIP_SERVERS_WITH_TAG',
        attempts: 0,
        novaRequestId: null,
      },
      { service: 'evacuation-worker', instance: 'evacuator-1' },
    );
    const text = renderIncident(evacuated, [{ offsetMilliseconds: 5_000, event: skipped }], openedAt);
    const section = text.split('Not evacuated\n')[1]!.split('\n\n')[0]!.split('\n');
    assert.match(section[0]!, /^SERVER\s+ID\s+REASON\s+WHY$/);
    assert.match(section[1]!, /^amphora-1\s+server-lb\s+tag\s+tag "amphora" is in SKIP_SERVERS_WITH_TAG$/);
    assert.doesNotMatch(renderIncident(evacuated, [], openedAt), /Not evacuated/);
  });

  it('gives the record and the timeline offsets in milliseconds with --json', async () => {
    const run = await lifeguard(['incident', evacuated.id, '--json'], env);
    assert.equal(run.code, 0, run.stderr);
    const body = run.json<{
      incident: Incident;
      timeline: Array<{ offsetMilliseconds: number; event: LifeguardEvent }>;
    }>();
    assert.equal(body.incident.id, evacuated.id);
    assert.equal(body.incident.fence?.proof, 'power-off-confirmed');
    assert.deepEqual(
      body.timeline.map((entry) => [entry.offsetMilliseconds, entry.event.type]),
      [
        [125, 'host.down'],
        [2250, 'host.fenced'],
        [11_500, 'host.evacuated'],
      ],
    );
  });

  it('an unknown incident fails with exit status 1 and says so', async () => {
    const run = await lifeguard(['incident', 'compute-9.20261130T000000Z.beef'], env);
    assert.equal(run.code, 1);
    assert.equal(run.stdout, '');
    assert.match(run.stderr, /^lifeguard: no incident compute-9\.20261130T000000Z\.beef\n/);
  });

  it('a missing argument or a bad --limit is a usage error (exit status 2)', async () => {
    const missing = await lifeguard(['incident'], env);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /^lifeguard: missing required argument 'id'$/m);
    const limit = await lifeguard(['incidents', '--limit', 'many'], env);
    assert.equal(limit.code, 2);
    assert.match(limit.stderr, /argument 'many' is invalid\. must be a whole number ≥ 1/);
  });
});

describe('lifeguard events', () => {
  const prefix = randomKeyPrefix('cli-events');
  const redis = testRedis();
  const env = { LIFEGUARD_REDIS_KEY_PREFIX: prefix };
  const monitor = { service: 'node-monitor', instance: 'monitor-a' };

  before(async () => {
    const journal = new EventJournal(redis, prefix);
    await journal.record(
      createEvent(
        'threshold.exceeded',
        {
          scope: 'global',
          aggregate: null,
          impacted: 6,
          total: 10,
          percent: 60,
          threshold: 50,
          hosts: ['compute-1', 'compute-2', 'compute-3', 'compute-4', 'compute-5', 'compute-6'],
        },
        monitor,
        new Date('2026-11-30T09:49:14Z'),
      ),
    );
    await journal.record(
      createEvent(
        'admission.blocked',
        { gate: 'rate-limit', hosts: ['compute-7'], reason: 'MAX_HOSTS_PER_CYCLE 1' },
        monitor,
        new Date('2026-11-30T09:49:15Z'),
      ),
    );
    await journal.record(
      createEvent(
        'host.reenabled',
        { host: 'compute-7', serviceId: 'service-7', incidentId: 'compute-7.20261130T000000Z.abcd' },
        { service: 'evacuation-worker', instance: 'evacuator-1' },
        new Date('2026-11-30T09:50:00Z'),
      ),
    );
  });

  after(async () => {
    await deleteKeysWithPrefix(redis, prefix);
    await redis.quit();
  });

  it('shows the recent events of every kind, oldest first, with the hosts they are about', async () => {
    const run = await lifeguard(['events'], env);
    assert.equal(run.code, 0, run.stderr);
    const lines = run.stdout.trim().split('\n');
    assert.match(lines[0]!, /^TIME\s+EVENT\s+FROM\s+HOST\s+INCIDENT\s+DETAILS$/);
    assert.match(
      lines[1]!,
      /^2026-11-30 09:49:14Z\s+threshold\.exceeded\s+node-monitor monitor-a\s+compute-1,compute-2,compute-3,… \(6\)\s+-\s+scope=global aggregate=null impacted=6 total=10 percent=60 threshold=50 hosts=\[6 items\]$/,
    );
    assert.match(
      lines[2]!,
      /^2026-11-30 09:49:15Z\s+admission\.blocked\s+node-monitor monitor-a\s+compute-7\s+-\s+gate=rate-limit/,
    );
    assert.match(
      lines[3]!,
      /^2026-11-30 09:50:00Z\s+host\.reenabled\s+evacuation-worker evacuator-1\s+compute-7\s+compute-7\.20261130T000000Z\.abcd\s+serviceId=service-7$/,
    );
    assert.equal(lines.length, 4);
  });

  it("cuts each event's details at 100 characters, and shows them whole with --wide", () => {
    const reason =
      "all 12 active compute services look failed (3 past DELTA, 9 silent past THRESHOLD_SUSPECT_AGE): Nova's data is suspect";
    const event = createEvent(
      'admission.blocked',
      { gate: 'all-services-stale', hosts: ['compute-1'], reason },
      monitor,
      new Date('2026-11-30T09:49:15Z'),
    );
    assert.match(
      renderEvents([event]),
      /gate=all-services-stale hosts=\[compute-1\] reason=all 12 .{10,}…$/m,
    );
    assert.ok(renderEvents([event], { wide: true }).includes(`reason=${reason}`), 'the reason whole');
  });

  it('filters by type and by host, and prints JSON', async () => {
    const byType = await lifeguard(['events', '--type', 'threshold.exceeded', '--json'], env);
    assert.deepEqual(
      byType.json<LifeguardEvent[]>().map((event) => event.type),
      ['threshold.exceeded'],
    );
    const byHost = await lifeguard(['events', '--host', 'compute-7', '--json'], env);
    assert.deepEqual(
      byHost.json<LifeguardEvent[]>().map((event) => event.type),
      ['admission.blocked', 'host.reenabled'],
    );
    const limited = await lifeguard(['events', '--limit', '1', '--json'], env);
    assert.deepEqual(
      limited.json<LifeguardEvent[]>().map((event) => event.type),
      ['host.reenabled'],
    );
  });

  it('--since keeps the events from a time or a duration back from now, and refuses anything else', async () => {
    const sinceTime = await lifeguard(['events', '--since', '2026-11-30T09:49:30Z', '--json'], env);
    assert.deepEqual(
      sinceTime.json<LifeguardEvent[]>().map((event) => event.type),
      ['host.reenabled'],
    );
    // The journal's events are days old: none in the last hour.
    const lastHour = await lifeguard(['events', '--since', '1h', '--json'], env);
    assert.deepEqual(lastHour.json<LifeguardEvent[]>(), []);
    const wrong = await lifeguard(['events', '--since', 'yesterday'], env);
    assert.equal(wrong.code, 2);
    assert.match(
      wrong.stderr,
      /^lifeguard: option '--since <when>' argument 'yesterday' is invalid\. must be a duration back from now \(90s, 10m, 2h, 1d\) or an ISO 8601 time$/m,
    );
  });
});

describe('lifeguard events filters while reading the journal', () => {
  const prefix = randomKeyPrefix('cli-events-filter');
  const redis = testRedis();
  const journal = new EventJournal(redis, prefix);
  const env = { LIFEGUARD_REDIS_KEY_PREFIX: prefix };
  const monitor = { service: 'node-monitor', instance: 'monitor-a' };
  const partitionStart = Date.parse('2026-11-30T10:00:00Z');

  before(async () => {
    // compute-7 went down, then a partition journalled 2 events every 5 s for 25 minutes.
    await journal.record(
      createEvent(
        'host.down',
        {
          host: 'compute-7',
          incidentId: 'compute-7.20261130T095900Z.abcd',
          fencingToken: 3,
          kdumpFenced: false,
          resume: false,
          evidence,
        },
        monitor,
        new Date('2026-11-30T09:59:00Z'),
      ),
    );
    for (let cycle = 0; cycle < 300; cycle++) {
      const at = new Date(partitionStart + cycle * 5000);
      const hosts = ['compute-1', 'compute-2', 'compute-3', 'compute-4', 'compute-5', 'compute-6'];
      await journal.record(
        createEvent(
          'threshold.exceeded',
          { scope: 'global', aggregate: null, impacted: 6, total: 10, percent: 60, threshold: 50, hosts },
          monitor,
          at,
        ),
      );
      await journal.record(
        createEvent(
          'admission.blocked',
          { gate: 'all-services-stale', hosts, reason: 'partition' },
          monitor,
          at,
        ),
      );
    }
  });

  after(async () => {
    await deleteKeysWithPrefix(redis, prefix);
    await redis.quit();
  });

  it('finds a host.down older than --limit events of other types', async () => {
    const run = await lifeguard(['events', '--type', 'host.down'], env);
    assert.equal(run.code, 0, run.stderr);
    assert.doesNotMatch(run.stdout, /no events recorded/);
    assert.match(run.stdout, /2026-11-30 09:59:00Z\s+host\.down\s+node-monitor monitor-a\s+compute-7\s/);
    const byHost = await lifeguard(['events', '--host', 'compute-7', '--json'], env);
    assert.deepEqual(
      byHost.json<LifeguardEvent[]>().map((event) => event.type),
      ['host.down'],
    );
  });

  it('returns the --limit most recent matching events, oldest first', async () => {
    const run = await lifeguard(['events', '--type', 'threshold.exceeded', '--limit', '3', '--json'], env);
    const events = run.json<LifeguardEvent[]>();
    assert.deepEqual(
      events.map((event) => [event.type, event.occurredAt]),
      [
        ['threshold.exceeded', '2026-11-30T10:24:45.000Z'],
        ['threshold.exceeded', '2026-11-30T10:24:50.000Z'],
        ['threshold.exceeded', '2026-11-30T10:24:55.000Z'],
      ],
    );
  });
});

describe('lifeguard incident <id>: the re-enable request of every poll cycle', () => {
  const prefix = randomKeyPrefix('cli-recovery-requests');
  const redis = testRedis();
  const store = new IncidentStore(redis, prefix);
  const journal = new EventJournal(redis, prefix);
  const env = { LIFEGUARD_REDIS_KEY_PREFIX: prefix };
  const monitor = { service: 'node-monitor', instance: 'monitor-a' };

  after(async () => {
    await deleteKeysWithPrefix(redis, prefix);
    await redis.quit();
  });

  it('is listed once in the incident timeline, and every publication stays in lifeguard events', async () => {
    const openedAt = new Date('2026-11-30T11:00:00.000Z');
    const { incident } = await store.openIncident({
      host: 'compute-7',
      serviceId: 'service-7',
      fencingToken: 3,
      kdumpFenced: false,
      evidence,
      now: openedAt,
    });
    const at = (seconds: number) => new Date(openedAt.getTime() + seconds * 1000);
    // Two poll cycles (POLL 5 s) see the evacuated host as a re-enable candidate: down, then up again.
    for (const [seconds, state] of [
      [15, 'down'],
      [20, 'up'],
    ] as const) {
      await journal.record(
        createEvent(
          'host.recovery.requested',
          {
            host: 'compute-7',
            serviceId: 'service-7',
            incidentId: incident.id,
            fencingToken: 3,
            status: 'disabled',
            state,
            forcedDown: true,
            disabledReason: `lifeguard evacuation complete incident=${incident.id}`,
          },
          monitor,
          at(seconds),
        ),
      );
    }
    await journal.record(
      createEvent(
        'host.reenabled',
        { host: 'compute-7', serviceId: 'service-7', incidentId: incident.id },
        { service: 'evacuation-worker', instance: 'evacuator-1' },
        at(20.1),
      ),
    );
    const run = await lifeguard(['incident', incident.id, '--json'], env);
    assert.equal(run.code, 0, run.stderr);
    const { timeline } = run.json<{
      timeline: Array<{ offsetMilliseconds: number; event: LifeguardEvent }>;
    }>();
    assert.deepEqual(
      timeline.map((entry) => [entry.offsetMilliseconds, entry.event.type]),
      [
        [15_000, 'host.recovery.requested'],
        [20_100, 'host.reenabled'],
      ],
    );
    const all = await lifeguard(['events', '--type', 'host.recovery.requested', '--json'], env);
    assert.deepEqual(
      all.json<LifeguardEvent[]>().map((event) => event.occurredAt),
      ['2026-11-30T11:00:15.000Z', '2026-11-30T11:00:20.000Z'],
    );
  });
});
