import type { LifeguardEvent } from '@lifeguard/contracts';
import type { Aggregate } from '@lifeguard/openstack';
import { formatAge, formatTime, markerText } from '@lifeguard/operator-views';
import type { VNode } from 'preact';
import type { FleetHost, FleetView, ThresholdHeadroom } from '../readers/fleet.ts';
import { thresholdReason } from '../readers/threshold-reason.ts';
import { actionForm } from './action-form.ts';
import { fencingAdviceView } from './fencing-advice.ts';
import { html } from './html.ts';
import { badge, mainSection, table, whenSeen } from './layout.ts';

function blockingLine(threshold: ThresholdHeadroom, percent: string): VNode {
  if (threshold.blocked)
    return html`<p>${badge('BLOCKING', 'bad')} ${threshold.impacted} of ${threshold.total} compute hosts are down,
      forced down or silent (${percent} > THRESHOLD ${threshold.thresholdPercent} %): fencing and
      evacuation are stopped until enough hosts report up again.</p>`;
  const tripped = threshold.aggregateLimits.filter((limit) => limit.blocked);
  return html`${tripped.map((limit) => {
    const why = `aggregate ${limit.aggregate}: ${limit.impacted} of its ${limit.total} hosts impacted > instanceha:max_failures ${limit.maxFailures}`;
    return html`<p data-aggregate=${limit.aggregate}>${badge('BLOCKING', 'bad')} ${why}: fencing and evacuation
      of its hosts are stopped until enough of them report up again.</p>`;
  })}`;
}

function admittingLine(threshold: ThresholdHeadroom, percent: string): VNode {
  const binding = threshold.aggregateLimits.find((limit) => limit.aggregate === threshold.boundBy);
  const bound = binding
    ? html`(the limit is instanceha:max_failures ${binding.maxFailures} of
        aggregate <strong id="bound-by">${binding.aggregate}</strong>, ${binding.impacted} of its ${binding.total} hosts impacted)`
    : html`(the limit is THRESHOLD)`;
  return html`<p>${badge('admitting', 'ok')} ${threshold.impacted} of ${threshold.total} hosts impacted (${percent},
    THRESHOLD ${threshold.thresholdPercent} %). <strong id="headroom">${threshold.headroom}</strong> more host(s) may
    fail before fencing stops ${bound}.</p>`;
}

function thresholdCard(threshold: ThresholdHeadroom): VNode {
  const percent = `${threshold.percent.toFixed(1)} %`;
  const blocked = threshold.blocked || threshold.aggregateLimits.some((limit) => limit.blocked);
  return html`<section class="card" id="threshold" data-blocked=${String(blocked)}>
    <h2>THRESHOLD</h2>
    ${blocked ? blockingLine(threshold, percent) : admittingLine(threshold, percent)}
    ${threshold.impactedHosts.length > 0 ? html`<p class="muted">impacted: ${threshold.impactedHosts.join(', ')}</p>` : null}
  </section>`;
}

function gateRow(event: LifeguardEvent): unknown[] {
  if (event.type === 'threshold.exceeded') {
    const data = event.data;
    return [
      formatTime(event.occurredAt),
      data.scope === 'global' ? 'THRESHOLD' : `instanceha:max_failures of ${data.aggregate ?? '?'}`,
      thresholdReason(data),
      data.hosts.join(', '),
    ];
  }
  if (event.type === 'admission.blocked') {
    return [formatTime(event.occurredAt), event.data.gate, event.data.reason, event.data.hosts.join(', ')];
  }
  return [formatTime(event.occurredAt), event.type, '', ''];
}

function novaCells(host: FleetHost, now: Date): unknown[] {
  return [
    badge(host.state ?? 'unknown', host.state === 'up' ? 'ok' : 'bad'),
    badge(host.status, host.status === 'enabled' ? 'ok' : 'warn'),
    host.forcedDown ? badge('forced_down', 'bad') : 'no',
    html`<span title=${formatTime(host.updatedAt)}>${formatAge(host.updatedAt, now)}</span>`,
    html`<span class="heartbeat" title=${formatTime(host.lastHeartbeat)}>${formatAge(host.lastHeartbeat, now)}</span>`,
  ];
}

function lifeguardCells(host: FleetHost, writable: boolean, incidentsKnown: boolean): unknown[] {
  const marker = host.marker;
  const markerBadge =
    marker.kind === 'failed'
      ? badge('FAILED', 'bad')
      : marker.kind === 'reserved'
        ? badge('reserved', 'info')
        : marker.kind === 'none'
          ? markerText(marker)
          : badge(markerText(marker), 'warn');
  const canRehabilitate = host.incident !== null || host.forcedDown || host.status === 'disabled';
  return [
    host.protectedBy ?? badge('not protected', 'muted'),
    markerBadge,
    host.disabledReason,
    host.incident
      ? html`<a href=${`/incidents/${encodeURIComponent(host.incident.id)}`}>${host.incident.id}</a> (${host.incident.state})`
      : incidentsKnown
        ? null
        : badge('unknown', 'muted'),
    ...(writable
      ? [canRehabilitate ? actionForm('rehabilitate', 'rehabilitate', { host: host.host }, { writable }) : '']
      : []),
  ];
}

function zoneTables(
  hosts: ReadonlyArray<FleetHost>,
  writable: boolean,
  now: Date,
  incidentsKnown: boolean,
): VNode[] {
  const zones = [...new Set(hosts.map((host) => host.zone ?? '(no zone)'))].sort();
  return zones.map((zone) => {
    const members = hosts.filter((host) => (host.zone ?? '(no zone)') === zone);
    return html`<section class="zone" data-zone=${zone}>
      <h2>availability zone ${zone} <span class="muted">(${members.length} hosts)</span></h2>
      ${table(
        [
          'host',
          'state',
          'status',
          'forced_down',
          'last report',
          'heartbeat',
          'aggregates',
          'protected by',
          'marker',
          'disabled_reason',
          'open incident',
          ...(writable ? ['write action'] : []),
        ],
        members.map((host) => [
          html`<span class="host" data-host=${host.host}>${host.host}</span>`,
          ...novaCells(host, now),
          host.aggregates.join(', '),
          ...lifeguardCells(host, writable, incidentsKnown),
        ]),
      )}
    </section>`;
  });
}

function aggregateTable(aggregates: ReadonlyArray<Aggregate>): VNode {
  return table(
    ['aggregate', 'availability zone', 'hosts', 'metadata'],
    aggregates.map((aggregate) => [
      aggregate.name,
      aggregate.availability_zone ?? null,
      aggregate.hosts.join(', '),
      Object.entries(aggregate.metadata)
        .map(([key, value]) => `${key}=${value}`)
        .join(' '),
    ]),
    'aggregates',
  );
}

/** The advice for every host whose fencing keeps failing (`lifeguard hosts` says the same). */
function fencingAdviceViews(hosts: ReadonlyArray<FleetHost>, writable: boolean): VNode[] {
  return hosts.flatMap((host) => {
    const view = host.incident
      ? fencingAdviceView(
          { ...host.incident, host: host.host },
          writable ? 'incident' : null,
          host.fencingFacts,
        )
      : null;
    return view === null ? [] : [view];
  });
}

/** The fleet page: THRESHOLD headroom, DISABLED, the leader, the advice while fencing keeps failing, hosts by zone, aggregates, gate events. */
export function fleetPage(view: FleetView, writable: boolean, now: Date = new Date()): VNode {
  const disabled = whenSeen(view.instanceHa, 'the InstanceHA configuration', (config) =>
    config.disabled
      ? html`<p id="disabled">${badge('DISABLED', 'bad')} no fencing and no evacuation (DISABLED is set)</p>`
      : html`<p id="disabled">${badge('enabled', 'ok')} DISABLED is off</p>`,
  );
  const leader = whenSeen(view.leader, 'the node monitor leader', (holder) =>
    holder
      ? html`<p id="leader">node monitor leader <strong>${holder.holder}</strong>, fencing token <strong>${holder.token}</strong></p>`
      : html`<p id="leader">${badge('no leader', 'bad')} no node monitor holds the lease: nothing detects failed hosts</p>`,
  );
  return mainSection(
    'Fleet',
    html`<div class="cards">
      ${whenSeen(view.threshold, 'THRESHOLD', thresholdCard)}
      <section class="card"><h2>Instance HA</h2>${disabled}${leader}</section>
    </div>`,
    ...(view.hosts.ok ? fencingAdviceViews(view.hosts.value, writable) : []),
    ...(view.openIncidents.ok ? [] : [whenSeen(view.openIncidents, 'the open incidents', () => html``)]),
    ...(view.hosts.ok
      ? zoneTables(view.hosts.value, writable, now, view.openIncidents.ok)
      : [whenSeen(view.hosts, 'the compute hosts', () => html``)]),
    html`<h2>Aggregates</h2>`,
    whenSeen(view.aggregates, 'the aggregates', aggregateTable),
    html`<h2>Held back by a gate (newest first)</h2>`,
    whenSeen(view.gates, 'the gate events', (events) =>
      events.length === 0
        ? html`<p class="muted" id="gates">no recent THRESHOLD or admission gate event</p>`
        : table(['at', 'gate', 'why', 'hosts'], events.map(gateRow), 'gates'),
    ),
  );
}
