// The console's pages rendered from hand-made views (no broker): everything shown is escaped, the
// timeline reads as the chain of an incident, THRESHOLD headroom is counted as the node monitor gates.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createEvent, type LifeguardEvent } from '@lifeguard/contracts';
import type { Incident } from '@lifeguard/instance-ha';
import { evaluateThreshold, parseDisabledReason, thresholdOfServiceListing } from '@lifeguard/instance-ha';
import type { Aggregate } from '@lifeguard/openstack';
import type { SystemStatus, TimelineEntry } from '@lifeguard/operator-views';
import { ActionForm } from '../src/actions/run-action.ts';
import {
  checkOperatorToken,
  presentedToken,
  thresholdHeadroom,
  thresholdHeadroomOf,
  timelineEnd,
  timelineSteps,
  WriteRefusedError,
} from '../src/index.ts';
import { fleetPage } from '../src/pages/fleet-page.ts';
import { renderFragment } from '../src/pages/html.ts';
import { incidentPage, incidentsPage } from '../src/pages/incidents-page.ts';
import { queuesPage } from '../src/pages/queues-page.ts';
import type { FleetView } from '../src/readers/fleet.ts';

const HOSTILE = '<script>alert("x")</script>';
const source = { service: 'test', instance: 'test' };

function incident(overrides: Partial<Incident> = {}): Incident {
  return {
    id: 'inc-1',
    host: `compute-${HOSTILE}`,
    serviceId: 'svc-1',
    state: 'evacuating',
    openedAt: '2026-12-01T10:00:00.000Z',
    updatedAt: '2026-12-01T10:00:05.000Z',
    fencingToken: 7,
    kdumpFenced: false,
    resume: false,
    evidence: {
      serviceId: 'svc-1',
      state: 'down',
      status: 'enabled',
      forcedDown: false,
      disabledReason: null,
      updatedAt: '2026-12-01T09:59:50.000Z',
      ageSeconds: 10,
      zone: 'nova',
    },
    fence: null,
    closedAt: null,
    outcome: null,
    lastPublishedAt: null,
    publishCount: 1,
    lastPublishedFencingToken: null,
    ...overrides,
  } as Incident;
}

const fencedByBmc = {
  proof: 'power-off-confirmed',
  method: 'fence_redfish',
  at: '2026-12-01T10:00:03.000Z',
  by: null,
  note: null,
} as Incident['fence'];

function at(event: LifeguardEvent, iso: string): LifeguardEvent {
  return { ...event, occurredAt: iso } as LifeguardEvent;
}

function chain(host: string): TimelineEntry[] {
  const events = [
    at(
      createEvent(
        'host.down',
        {
          host,
          incidentId: 'inc-1',
          fencingToken: 7,
          evidence: incident().evidence,
          kdumpFenced: false,
          resume: false,
        },
        source,
      ),
      '2026-12-01T10:00:00.000Z',
    ),
    at(
      createEvent(
        'host.fenced',
        {
          host,
          incidentId: 'inc-1',
          proof: 'power-off-confirmed',
          method: 'fence_redfish',
          attempts: 1,
          durationSeconds: 2.5,
        },
        source,
      ),
      '2026-12-01T10:00:03.000Z',
    ),
    at(
      createEvent(
        'host.evacuation.started',
        { host, incidentId: 'inc-1', mode: 'smart', instanceCount: 1, reservedHost: null },
        source,
      ),
      '2026-12-01T10:00:04.000Z',
    ),
    at(
      createEvent(
        'instance.evacuated',
        {
          host,
          incidentId: 'inc-1',
          instanceId: 'i-1',
          instanceName: HOSTILE,
          targetHost: 'compute-2',
          migrationStatus: 'done',
          attempts: 1,
          novaRequestId: null,
          durationSeconds: 3,
        },
        source,
      ),
      '2026-12-01T10:00:07.000Z',
    ),
    at(
      createEvent(
        'host.evacuated',
        {
          host,
          incidentId: 'inc-1',
          mode: 'smart',
          evacuatedInstances: ['i-1'],
          durationSeconds: 3.2,
          poweredOn: true,
        },
        source,
      ),
      '2026-12-01T10:00:07.500Z',
    ),
    at(
      createEvent('host.reenabled', { host, serviceId: 'svc-1', incidentId: 'inc-1' }, source),
      '2026-12-01T10:00:20.000Z',
    ),
  ];
  const opened = Date.parse('2026-12-01T10:00:00.000Z');
  return events.map((event) => ({ event, offsetMilliseconds: Date.parse(event.occurredAt) - opened }));
}

describe('console pages', () => {
  it('escape a host name, an instance name and a disabled_reason holding <script> on every page', () => {
    const host = `compute-${HOSTILE}`;
    const fleet: FleetView = {
      openIncidents: { ok: true, value: 1 },
      hosts: {
        ok: true,
        value: [
          {
            host,
            serviceId: 'svc-1',
            zone: HOSTILE,
            status: 'disabled',
            state: 'down',
            forcedDown: true,
            updatedAt: null,
            lastHeartbeat: null,
            disabledReason: HOSTILE,
            marker: parseDisabledReason(HOSTILE),
            incident: {
              id: 'inc-1',
              state: 'evacuating',
              openedAt: '2026-12-01T10:00:00.000Z',
              fenced: true,
            },
            aggregates: [HOSTILE],
            protectedBy: `aggregate ${HOSTILE}`,
          },
        ],
      },
      aggregates: {
        ok: true,
        value: [{ id: 1, name: HOSTILE, hosts: [host], metadata: { [HOSTILE]: HOSTILE } }],
      },
      threshold: { ok: false, source: 'Nova', reason: HOSTILE },
      leader: { ok: true, value: { holder: HOSTILE, token: 3, expiresInMilliseconds: 1000 } },
      instanceHa: { ok: false, source: 'InstanceHA configuration', reason: HOSTILE },
      gates: { ok: true, value: [] },
    };
    const pages = [
      renderFragment(fleetPage(fleet, true)),
      renderFragment(incidentsPage({ ok: true, value: [incident()] })),
      renderFragment(
        incidentPage({ ok: true, value: { incident: incident(), timeline: chain(host) } }, 'inc-1', true),
      ),
    ];
    for (const html of pages) {
      assert.doesNotMatch(html, /<script>/, 'no raw <script>');
      assert.match(
        html,
        /&lt;script>alert\(&quot;x&quot;\)&lt;\/script>|&lt;script&gt;alert\(&quot;x&quot;\)&lt;\/script&gt;/,
      );
    }
  });

  it('draw the timeline from down to re-enabled with the proof, the method, each instance and the durations between steps', () => {
    const steps = timelineSteps(chain('compute-1'));
    assert.deepEqual(
      steps.map((step) => step.label),
      [
        'down',
        'fenced',
        'forced down and disabled; evacuation started',
        `instance ${HOSTILE} ACTIVE`,
        'evacuated',
        're-enabled',
      ],
    );
    assert.equal(steps[1]!.detail, 'proof power-off-confirmed by fence_redfish, 1 attempt(s), 2.5 s');
    assert.match(steps[3]!.detail, /^evacuate to ACTIVE on compute-2 in 3.0 s, 1 attempt\(s\)/);
    assert.deepEqual(
      steps.map((step) => step.sincePreviousMilliseconds),
      [null, 3000, 1000, 3000, 500, 12_500],
    );
    assert.deepEqual(timelineEnd(incident({ state: 'closed' }), steps), {
      kind: 'reenabled',
      text: 'the host is back in service',
    });
  });

  it('show each server left on the host with the reason and the rule that kept it there', () => {
    const skipped = createEvent(
      'instance.evacuation.skipped',
      {
        host: 'compute-1',
        incidentId: 'inc-1',
        instanceId: 'server-db',
        instanceName: 'db-1',
        reason: 'metadata',
        detail: 'metadata owner=trove (SKIP_SERVERS_WITH_METADATA)',
        attempts: 0,
        novaRequestId: null,
      },
      source,
    );
    const [step] = timelineSteps([
      { event: at(skipped, '2026-12-01T10:00:05.000Z'), offsetMilliseconds: 5_000 },
    ]);
    assert.equal(step!.label, 'instance db-1 not evacuated: metadata');
    assert.equal(step!.detail, 'metadata owner=trove (SKIP_SERVERS_WITH_METADATA)');
    assert.equal(step!.outcome, 'note');
  });

  it('say where and why an incident stopped', () => {
    const entries = chain('compute-1').slice(0, 1);
    const failed = createEvent(
      'host.fencing.failed',
      { host: 'compute-1', incidentId: 'inc-1', reason: 'BMC unreachable', recoverable: false, attempts: 3 },
      source,
    );
    entries.push({ event: at(failed, '2026-12-01T10:00:30.000Z'), offsetMilliseconds: 30_000 });
    const end = timelineEnd(incident({ state: 'failed' }), timelineSteps(entries));
    assert.equal(end.kind, 'stopped');
    assert.equal(
      end.text,
      'stopped at "fencing failed": BMC unreachable (3 attempt(s), a person must act); a person must act',
    );
  });

  it('say, while fencing keeps failing, that confirm-fenced is the way forward and what to check first (incident and fleet pages), with the override as a field of its own', () => {
    const failing = incident({ id: 'inc-9', host: 'compute-3', state: 'failed' });
    const page = renderFragment(
      incidentPage({ ok: true, value: { incident: failing, timeline: [] } }, 'inc-9', true),
    );
    assert.match(
      page,
      /Fencing compute-3 has not succeeded \(incident inc-9, failed\): nothing is evacuated until it is fenced\./,
    );
    assert.match(
      page,
      /First check that compute-3 is really powered off \(BMC, PDU outlet, rack power, console\)/,
    );
    assert.match(page, /<code>lifeguard host confirm-fenced compute-3 --operator &lt;your name><\/code>/);
    assert.match(page, /It is refused while the host still reports to Nova or sends heartbeats\./);
    assert.match(page, /On this console: the confirm form below\./);
    const form = page.slice(page.indexOf('data-action="confirm-fenced"'));
    assert.match(
      form,
      /<input type="checkbox" name="host-is-reporting-override" value="yes"\/>/,
      'the override is its own field, not ticked',
    );

    const readOnly = renderFragment(
      incidentPage({ ok: true, value: { incident: failing, timeline: [] } }, 'inc-9', false),
    );
    assert.match(readOnly, /<code>lifeguard host confirm-fenced compute-3 --operator &lt;your name><\/code>/);
    assert.doesNotMatch(
      readOnly,
      /confirm form|host-is-reporting-override/,
      'a read-only console has no form',
    );

    for (const quiet of [
      incident({ state: 'failed', fence: fencedByBmc }),
      incident({ state: 'evacuating', fence: fencedByBmc }),
      incident({ state: 'open' }),
    ]) {
      const html = renderFragment(
        incidentPage({ ok: true, value: { incident: quiet, timeline: [] } }, quiet.id, true),
      );
      assert.doesNotMatch(html, /data-advice=/, `no advice for a ${quiet.state} incident`);
    }

    const host = (name: string, state: Incident['state'], fenced: boolean) => ({
      host: name,
      serviceId: `svc-${name}`,
      zone: 'nova',
      status: 'disabled',
      state: 'down',
      forcedDown: false,
      updatedAt: null,
      lastHeartbeat: null,
      disabledReason: null,
      marker: parseDisabledReason(null),
      incident: { id: `inc-${name}`, state, openedAt: '2026-12-01T10:00:00.000Z', fenced },
      aggregates: [],
      protectedBy: null,
    });
    const fleet: FleetView = {
      openIncidents: { ok: true, value: 2 },
      hosts: {
        ok: true,
        value: [host('compute-3', 'fencing', false), host('compute-4', 'evacuating', true)],
      },
      aggregates: { ok: true, value: [] },
      threshold: { ok: false, source: 'Nova', reason: 'not read' },
      leader: { ok: true, value: null },
      instanceHa: { ok: false, source: 'InstanceHA configuration', reason: 'not read' },
      gates: { ok: true, value: [] },
    };
    const fleetHtml = renderFragment(fleetPage(fleet, true));
    assert.match(fleetHtml, /Fencing compute-3 has not succeeded \(incident inc-compute-3, fencing\)/);
    assert.match(
      fleetHtml,
      /<code>lifeguard host confirm-fenced compute-3 --operator &lt;your name><\/code>/,
    );
    assert.match(
      fleetHtml,
      /On this console: the confirm form of incident <a href="\/incidents\/inc-compute-3">inc-compute-3<\/a>/,
    );
    assert.doesNotMatch(fleetHtml, /Fencing compute-4/, 'a fenced host needs no advice');
  });

  it('advise from the facts: wait for a pending retry (no confirm form offered), rehabilitate a host that reports again', () => {
    const now = new Date('2026-12-01T10:00:00.000Z');
    const fencing = incident({ id: 'inc-7', host: 'compute-7', state: 'fencing' });
    const retrying = renderFragment(
      incidentPage(
        {
          ok: true,
          value: {
            incident: fencing,
            timeline: [],
            fencingFacts: {
              job: {
                state: 'delayed',
                attemptsMade: 1,
                attempts: 3,
                retryAt: '2026-12-01T10:00:09.000Z',
                lockHeld: null,
              },
              reporting: { reporting: false, evidence: ['Nova: state down'] },
              now,
            },
          },
        },
        'inc-7',
        true,
      ),
    );
    assert.match(retrying, /data-advice="wait"/);
    assert.match(retrying, /lifeguard tries again by itself at 2026-12-01 10:00:09Z \(in 9\.0 s\)/);
    assert.doesNotMatch(retrying, /<code>lifeguard host confirm-fenced/);
    assert.doesNotMatch(retrying, /On this console: the confirm form/);

    const back = renderFragment(
      incidentPage(
        {
          ok: true,
          value: {
            incident: incident({ id: 'inc-8', host: 'compute-8', state: 'failed' }),
            timeline: [],
            fencingFacts: { job: null, reporting: { reporting: true, evidence: ['Nova: state up'] }, now },
          },
        },
        'inc-8',
        true,
      ),
    );
    assert.match(back, /data-advice="rehabilitate"/);
    assert.match(back, /<code>lifeguard host rehabilitate compute-8 --operator &lt;your name><\/code>/);
    assert.doesNotMatch(back, /<code>lifeguard host confirm-fenced/);
  });

  it("show Nova's hosts when Redis cannot be read, saying their incidents are unknown", () => {
    const fleet: FleetView = {
      openIncidents: { ok: false, source: 'Redis', reason: 'connect ECONNREFUSED 127.0.0.1:6379' },
      hosts: {
        ok: true,
        value: [
          {
            host: 'compute-7',
            serviceId: 'svc-7',
            zone: 'nova',
            status: 'enabled',
            state: 'down',
            forcedDown: false,
            updatedAt: null,
            lastHeartbeat: null,
            disabledReason: null,
            marker: parseDisabledReason(null),
            incident: null,
            aggregates: [],
            protectedBy: null,
          },
        ],
      },
      aggregates: { ok: true, value: [] },
      threshold: { ok: false, source: 'Nova', reason: 'not read' },
      leader: { ok: false, source: 'Redis', reason: 'connect ECONNREFUSED 127.0.0.1:6379' },
      instanceHa: { ok: false, source: 'InstanceHA configuration', reason: 'not read' },
      gates: { ok: false, source: 'Redis', reason: 'connect ECONNREFUSED 127.0.0.1:6379' },
    };
    const fleetHtml = renderFragment(fleetPage(fleet, false));
    assert.match(fleetHtml, /data-host="compute-7"/, 'the host table is shown from Nova alone');
    assert.match(fleetHtml, /cannot see the open incidents: Redis — connect ECONNREFUSED/);
    assert.match(fleetHtml, />unknown</, "the host's open incident is unknown, not shown as none");
  });

  it('take the override only as "yes" from its own field, naming the field otherwise', () => {
    const base = { operator: 'alice', host: 'compute-3' };
    assert.equal(
      ActionForm.parse({ ...base, 'host-is-reporting-override': 'yes' })['host-is-reporting-override'],
      'yes',
    );
    assert.equal(ActionForm.parse(base)['host-is-reporting-override'], undefined);
    const refused = ActionForm.safeParse({ ...base, 'host-is-reporting-override': 'on' });
    assert.equal(refused.success, false);
    assert.deepEqual(
      refused.error?.issues.map((issue) => [issue.path.join('.'), issue.message]),
      [['host-is-reporting-override', 'host-is-reporting-override is "yes" (ticked) or absent']],
    );
  });

  it('count THRESHOLD headroom as the gate does: the largest number of further failures still at or under THRESHOLD', () => {
    const services = Array.from({ length: 12 }, (_, index) => ({
      host: `h${index}`,
      state: index < 2 ? 'down' : 'up',
      forcedDown: false,
    }));
    const result = evaluateThreshold({
      services: services as never,
      survivors: [],
      thresholdPercent: 50,
      evacuableAggregateHosts: null,
    });
    assert.equal(
      thresholdHeadroom(result, 50),
      4,
      '2 down of 12: 4 more make 6 of 12 = 50 %, still admitted',
    );
    const blocked = evaluateThreshold({
      services: services as never,
      survivors: ['h2', 'h3', 'h4', 'h5', 'h6'],
      thresholdPercent: 50,
      evacuableAggregateHosts: null,
    });
    assert.equal(blocked.blocked, true);
    assert.equal(thresholdHeadroom(blocked, 50), 0);
  });
});

/** The demo cloud's shape: compute-01..10 in `ha-compute` (evacuable, max_failures 3), two spares in `general`. */
const NOW = new Date('2026-12-01T10:00:00.000Z');
const DEMO_AGGREGATES: Aggregate[] = [
  {
    id: 1,
    name: 'ha-compute',
    hosts: Array.from({ length: 10 }, (_, index) => `compute-${String(index + 1).padStart(2, '0')}`),
    metadata: { evacuable: 'true', 'instanceha:max_failures': '3' },
  },
  { id: 2, name: 'general', hosts: ['spare-01', 'spare-02'], metadata: {} },
];
const DEMO_CONFIG = {
  deltaSeconds: 30,
  thresholdSuspectAgeSeconds: 20,
  thresholdPercent: 50,
  taggedAggregates: true,
  evacuableTag: 'evacuable',
};

/** Nova's `os-services` records of the demo cloud, `down` hosts reporting as down. */
function demoServices(down: ReadonlyArray<string>): unknown[] {
  return [...DEMO_AGGREGATES[0]!.hosts, 'spare-01', 'spare-02'].map((host, index) => ({
    id: `svc-${index}`,
    binary: 'nova-compute',
    host,
    zone: 'nova',
    status: 'enabled',
    state: down.includes(host) ? 'down' : 'up',
    forced_down: false,
    disabled_reason: null,
    updated_at: down.includes(host) ? '2026-12-01T09:58:00.000000' : '2026-12-01T09:59:58.000000',
  }));
}

/** The fleet page's THRESHOLD card as text (tags dropped, white space collapsed). */
function thresholdCardText(down: ReadonlyArray<string>): string {
  const result = thresholdOfServiceListing(
    demoServices(down),
    DEMO_CONFIG,
    new Set(DEMO_AGGREGATES[0]!.hosts),
    NOW,
  );
  const fleet: FleetView = {
    openIncidents: { ok: true, value: 0 },
    hosts: { ok: true, value: [] },
    aggregates: { ok: true, value: DEMO_AGGREGATES },
    threshold: { ok: true, value: thresholdHeadroomOf(result, DEMO_CONFIG, DEMO_AGGREGATES) },
    leader: { ok: true, value: null },
    instanceHa: { ok: false, source: 'InstanceHA configuration', reason: 'not read' },
    gates: { ok: true, value: [] },
  };
  const card = /<section class="card" id="threshold"[\s\S]*?<\/section>/.exec(
    renderFragment(fleetPage(fleet, false)),
  );
  assert.ok(card, 'the THRESHOLD card is drawn');
  return card[0]
    .replace(/<[^>]+>/g, ' ')
    .replace(/\s+/g, ' ')
    .replace(/ ([.,)])/g, '$1');
}

describe('the THRESHOLD card', () => {
  it("counts the headroom to the smallest of THRESHOLD and each evacuable aggregate's instanceha:max_failures, naming the one that binds", () => {
    const idle = thresholdCardText([]);
    assert.match(idle, /admitting 0 of 10 hosts impacted \(0\.0 %, THRESHOLD 50 %\)/);
    assert.match(
      idle,
      /3 more host\(s\) may fail before fencing stops \(the limit is instanceha:max_failures 3 of aggregate ha-compute, 0 of its 10 hosts impacted\)/,
      'THRESHOLD alone admits 5 more, but a 4th failure in ha-compute is already blocked',
    );
    const two = thresholdCardText(['compute-01', 'compute-02']);
    assert.match(
      two,
      /1 more host\(s\) may fail before fencing stops \(the limit is instanceha:max_failures 3 of aggregate ha-compute/,
    );
  });

  it('says BLOCKING and names the aggregate while its instanceha:max_failures is exceeded under THRESHOLD', () => {
    const partition = thresholdCardText(['compute-01', 'compute-02', 'compute-03', 'compute-04']);
    assert.doesNotMatch(partition, /admitting/);
    assert.match(
      partition,
      /BLOCKING aggregate ha-compute: 4 of its 10 hosts impacted > instanceha:max_failures 3: fencing and evacuation of its hosts are stopped/,
    );
  });

  it('names THRESHOLD as the limit when no aggregate limit is closer, with a space between its name and value', () => {
    const result = thresholdOfServiceListing(demoServices(['compute-01']), DEMO_CONFIG, null, NOW);
    const view = thresholdHeadroomOf(result, { ...DEMO_CONFIG, thresholdPercent: 20 }, DEMO_AGGREGATES);
    assert.equal(view.headroom, 1, '1 of 12 down: 2 of 12 = 16.7 % ≤ 20 %, 3 of 12 = 25 % is over');
    assert.equal(view.boundBy, null);
    const seven = thresholdCardText([
      'compute-01',
      'compute-02',
      'compute-03',
      'compute-04',
      'compute-05',
      'compute-06',
    ]);
    assert.match(
      seven,
      /BLOCKING 6 of 10 compute hosts are down, forced down or silent \(60\.0 % > THRESHOLD 50 %\)/,
    );
  });
});

describe('the gate reasons', () => {
  it('say which number is a percentage and which a count of hosts', () => {
    const event = (scope: 'global' | 'aggregate', threshold: number) =>
      createEvent(
        'threshold.exceeded',
        {
          scope,
          aggregate: scope === 'global' ? null : 'ha-compute',
          impacted: 5,
          total: 10,
          percent: 50,
          threshold,
          hosts: ['compute-01'],
        },
        source,
      );
    const fleet = (events: LifeguardEvent[]): string =>
      renderFragment(
        fleetPage(
          {
            openIncidents: { ok: true, value: 0 },
            hosts: { ok: true, value: [] },
            aggregates: { ok: true, value: [] },
            threshold: { ok: false, source: 'Nova', reason: 'not read' },
            leader: { ok: true, value: null },
            instanceHa: { ok: false, source: 'InstanceHA configuration', reason: 'not read' },
            gates: { ok: true, value: events },
          },
          false,
        ),
      );
    const html = fleet([event('aggregate', 3), event('global', 40)]);
    assert.match(
      html,
      /5 of 10 hosts of aggregate ha-compute impacted &gt; instanceha:max_failures 3 hosts|5 of 10 hosts of aggregate ha-compute impacted > instanceha:max_failures 3 hosts/,
    );
    assert.match(
      html,
      /5 of 10 hosts impacted: 50\.0 % &gt; THRESHOLD 40 %|5 of 10 hosts impacted: 50\.0 % > THRESHOLD 40 %/,
    );
    assert.doesNotMatch(html, /\(50\.0 % > 3\)/);
  });

  it("leave no unnamed column in the host table, the host agent's last heartbeat among them", () => {
    const host = {
      host: 'compute-01',
      serviceId: 'svc-1',
      zone: 'nova',
      status: 'enabled',
      state: 'up',
      forcedDown: false,
      updatedAt: null,
      lastHeartbeat: '2026-12-01T10:00:04.000Z',
      disabledReason: null,
      marker: parseDisabledReason(null),
      incident: null,
      aggregates: ['ha-compute'],
      protectedBy: 'aggregate ha-compute',
    } as const;
    for (const writable of [false, true]) {
      const html = renderFragment(
        fleetPage(
          {
            openIncidents: { ok: true, value: 0 },
            hosts: { ok: true, value: [host] },
            aggregates: { ok: true, value: [] },
            threshold: { ok: false, source: 'Nova', reason: 'not read' },
            leader: { ok: true, value: null },
            instanceHa: { ok: false, source: 'InstanceHA configuration', reason: 'not read' },
            gates: { ok: true, value: [] },
          },
          writable,
        ),
      );
      assert.doesNotMatch(html, /<th><\/th>/, `writable ${writable}: every column has a name`);
      const hostTable = /<section class="zone"[\s\S]*?<\/section>/.exec(html)?.[0] ?? '';
      const headers = (hostTable.match(/<th>/g) ?? []).length;
      const cells = (hostTable.match(/<td>/g) ?? []).length;
      assert.equal(cells, headers, `writable ${writable}: one header per cell`);
      assert.match(hostTable, /<th>heartbeat<\/th>/);
      assert.match(hostTable, /<span class="heartbeat" title="2026-12-01 10:00:04Z">[^<]+ ago<\/span>/);
    }
  });
});

describe('the operator token', () => {
  it('is taken from a bearer header before the form field', () => {
    assert.equal(presentedToken('Bearer abc', 'def'), 'abc');
    assert.equal(presentedToken(undefined, 'def'), 'def');
    assert.equal(presentedToken('Basic abc', ''), null);
  });

  it('refuses every write on a read-only console (403) and a missing or wrong token (401)', () => {
    const refused = (configured: string | undefined, presented: string | null) => {
      try {
        checkOperatorToken(configured, presented);
        return null;
      } catch (error) {
        assert.ok(error instanceof WriteRefusedError);
        return error.statusCode;
      }
    };
    assert.equal(refused(undefined, 'anything-at-all-here'), 403);
    assert.equal(refused('the-right-token-1234', null), 401);
    assert.equal(refused('the-right-token-1234', 'the-right-token-123'), 401);
    assert.equal(refused('the-right-token-1234', 'the-right-token-1234'), null);
  });
});

describe("the queues page's last poll", () => {
  const status = (
    admission: SystemStatus['admission'],
    failedPoll: SystemStatus['failedPoll'] = null,
    capacityHolds: SystemStatus['capacityHolds'] = [],
  ): SystemStatus => ({
    workers: [],
    workerKinds: [],
    leaderKey: 'lifeguard:node-monitor:leader',
    leader: null,
    jobQueues: [],
    brokerQueues: [],
    brokerError: null,
    openIncidents: [],
    admission,
    failedPoll,
    capacityHolds,
  });
  const page = (
    admission: SystemStatus['admission'],
    now: Date,
    failedPoll: SystemStatus['failedPoll'] = null,
    capacityHolds: SystemStatus['capacityHolds'] = [],
  ) =>
    renderFragment(
      queuesPage(
        {
          status: { ok: true, value: status(admission, failedPoll, capacityHolds) },
          deadLetters: { ok: true, value: { count: 0, letters: [], readAt: null, stale: false } },
        },
        false,
        now,
      ),
    );

  it('names the gate that stopped the poll first, then each held host and until when, all escaped', () => {
    const now = new Date('2026-12-03T10:00:10Z');
    const html = page(
      {
        at: '2026-12-03T10:00:08.000Z',
        stoppedBy: 'all-services-stale',
        blocked: [
          { gate: 'rate-limit', hosts: ['c-9'], reason: 'MAX_HOSTS_PER_CYCLE 1' },
          {
            gate: 'all-services-stale',
            hosts: [`c-${HOSTILE}`],
            reason: 'all 3 active compute services look failed',
          },
        ],
        held: [{ host: 'c-7', gate: 'threshold', until: '2026-12-03T10:00:40.000Z' }],
      },
      now,
    );
    assert.doesNotMatch(html, /<script>/);
    assert.match(
      html,
      /Last poll \(2026-12-03 10:00:08Z, 2\.0 s ago\): stopped by all-services-stale, nothing fenced/,
    );
    const items = [...html.matchAll(/<li data-gate="([^"]+)"/g)].map((match) => match[1]);
    assert.deepEqual(items, ['all-services-stale', 'rate-limit', 'mass-event-hold-down']);
    assert.match(html, /STOPPED/);
    assert.match(
      html,
      /held: c-7 \(went silent in a blocked threshold event\) until 2026-12-03 10:00:40Z \(in 30\.0 s\)/,
    );
  });

  it('lists each fence held back for want of room, as lifeguard status does, escaped; nothing when none', () => {
    const now = new Date('2026-12-03T10:00:10Z');
    const poll = { at: '2026-12-03T10:00:09.000Z', stoppedBy: null, blocked: [], held: [] };
    assert.doesNotMatch(page(poll, now), /capacity-holds/);
    const html = page(poll, now, null, [
      {
        incidentId: 'inc-1',
        host: 'compute-3',
        hold: {
          at: '2026-12-03T10:00:00.000Z',
          serverCount: 2,
          reason: `no compute host can take the 2 server(s) of compute-3: ${HOSTILE}`,
        },
      },
    ]);
    assert.doesNotMatch(html, /<script>/);
    assert.match(html, /<li data-host="compute-3">.*NO ROOM/);
    assert.match(
      html,
      /no room: compute-3 is not fenced \(since 2026-12-03 10:00:00Z, 10\.0 s ago\): no compute host can take the 2 server\(s\) of compute-3: .* — lifeguard incident inc-1/,
    );
  });

  it('says when no poll is kept, and when the last one held nothing back', () => {
    assert.match(page(null, new Date()), /Last poll: none kept/);
    const now = new Date('2026-12-03T10:00:10Z');
    assert.match(
      page({ at: '2026-12-03T10:00:09.000Z', stoppedBy: null, blocked: [], held: [] }, now),
      /Last poll \(2026-12-03 10:00:09Z, 1\.0 s ago\): nothing held back/,
    );
  });

  it('says the leader polls and fails (Nova unreachable) when a failed poll is newer than the last good one', () => {
    const now = new Date('2026-12-03T10:01:00Z');
    const good = { at: '2026-12-03T10:00:00.000Z', stoppedBy: null, blocked: [], held: [] };
    const failed = {
      at: '2026-12-03T10:00:58.000Z',
      consecutiveFailures: 4,
      reason: 'Nova did not answer within 30 s (GET http://nova/os-services)',
    };
    const html = page(good, now, failed);
    assert.match(
      html,
      /Last poll \(2026-12-03 10:00:58Z, 2\.0 s ago\): failed, 4 in a row — nothing is fenced until the node monitor can read Nova again; the last good poll was at 2026-12-03 10:00:00Z/,
    );
    assert.match(html, /poll failed: Nova did not answer within 30 s/);
    assert.doesNotMatch(page(null, now, failed), /none kept/, 'a failed poll is not "no leader has polled"');
    assert.match(
      page({ ...good, at: '2026-12-03T10:00:59.000Z' }, now, failed),
      /nothing held back/,
      'a good poll after the failure is the present again',
    );
  });
});
