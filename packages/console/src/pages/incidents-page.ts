import type { Incident } from '@lifeguard/instance-ha';
import {
  type FencingFacts,
  formatAge,
  formatDuration,
  formatOffset,
  formatTime,
  type IncidentTimeline,
  incidentFenceText,
} from '@lifeguard/operator-views';
import type { VNode } from 'preact';
import type { Seen } from '../readers/seen.ts';
import { type TimelineStep, timelineEnd, timelineSteps } from '../readers/timeline-steps.ts';
import { actionForm } from './action-form.ts';
import { fencingAdviceView } from './fencing-advice.ts';
import { html } from './html.ts';
import { badge, mainSection, table, whenSeen } from './layout.ts';

function stateBadge(incident: Incident): VNode {
  const tone = incident.state === 'failed' ? 'bad' : incident.state === 'closed' ? 'muted' : 'warn';
  return badge(incident.state, tone);
}

/** The incidents page: open ones first, then recent closed ones, newest first. */
export function incidentsPage(incidents: Seen<Incident[]>, now: Date = new Date()): VNode {
  return mainSection(
    'Incidents',
    whenSeen(incidents, 'the incidents', (list) => {
      if (list.length === 0) return html`<p class="muted" id="no-incidents">no incidents</p>`;
      const open = list.filter((incident) => incident.closedAt === null);
      const closed = list.filter((incident) => incident.closedAt !== null);
      const rows = (items: Incident[]) =>
        items.map((incident) => [
          html`<a href=${`/incidents/${encodeURIComponent(incident.id)}`} class="incident-link" data-host=${incident.host}>${incident.id}</a>`,
          incident.host,
          stateBadge(incident),
          html`<span title=${formatTime(incident.openedAt)}>${formatAge(incident.openedAt, now)}</span>`,
          incidentFenceText(incident),
          formatDuration(
            (incident.closedAt ? Date.parse(incident.closedAt) : now.getTime()) -
              Date.parse(incident.openedAt),
          ),
          incident.outcome,
        ]);
      const headers = ['incident', 'host', 'state', 'opened', 'fence', 'duration', 'outcome'];
      return html`<div>
        <h2>Open (${open.length})</h2>
        ${open.length === 0 ? html`<p class="muted">none</p>` : table(headers, rows(open), 'open-incidents')}
        <h2>Recent</h2>
        ${closed.length === 0 ? html`<p class="muted">none</p>` : table(headers, rows(closed), 'recent-incidents')}
      </div>`;
    }),
  );
}

/** The timeline drawn along a time axis (each step placed at its offset) and listed with its durations. */
function timelineView(steps: ReadonlyArray<TimelineStep>): VNode {
  const span = Math.max(1, ...steps.map((step) => step.offsetMilliseconds));
  return html`<div class="timeline-wrap">
    <div class="axis" aria-hidden="true">
      ${steps.map(
        (step) => html`<span
          class=${`tick ${step.outcome}`}
          style=${`left: ${((Math.max(0, step.offsetMilliseconds) / span) * 100).toFixed(2)}%`}
          title=${`${step.label} ${formatOffset(step.offsetMilliseconds)}`}
        ></span>`,
      )}
      <span class="axis-end">${formatDuration(span)}</span>
    </div>
    <ol class="timeline" id="timeline">
      ${steps.map(
        (step) => html`<li class=${step.outcome} data-event=${step.eventType}>
          <span class="offset">${formatOffset(step.offsetMilliseconds)}</span>
          <span class="gap">${step.sincePreviousMilliseconds === null ? '' : `+${formatDuration(step.sincePreviousMilliseconds)}`}</span>
          <strong class="label">${step.label}</strong>
          <span class="detail">${step.detail}</span>
        </li>`,
      )}
    </ol>
  </div>`;
}

function evidenceView(incident: Incident): VNode {
  const evidence = incident.evidence;
  return table(
    ['Nova state', 'status', 'forced_down', 'updated_at', 'age', 'fencing token', 'kdump'],
    [
      [
        evidence.state,
        evidence.status,
        String(evidence.forcedDown),
        evidence.updatedAt,
        evidence.ageSeconds === null ? null : `${evidence.ageSeconds} s`,
        incident.fencingToken,
        String(incident.kdumpFenced),
      ],
    ],
    'evidence',
  );
}

/** One incident: its record, the evidence that opened it, its timeline, and the actions that apply. */
export function incidentPage(
  seen: Seen<(IncidentTimeline & { readonly fencingFacts?: FencingFacts }) | null>,
  incidentId: string,
  writable: boolean,
  now: Date = new Date(),
): VNode {
  return mainSection(
    `Incident ${incidentId}`,
    whenSeen(seen, 'the incident', (found) => {
      if (found === null)
        return html`<p class="unseen">no incident ${incidentId} (closed ones are kept 30 days)</p>`;
      const { incident } = found;
      const steps = timelineSteps(found.timeline);
      const end = timelineEnd(incident, steps);
      const open = incident.closedAt === null;
      return html`<div>
        <p>
          host <strong class="host">${incident.host}</strong> · ${stateBadge(incident)}${` · opened ${formatTime(incident.openedAt)} (${formatAge(incident.openedAt, now)}) · fence ${incidentFenceText(incident)}`}
        </p>
        <p id="timeline-end" data-end=${end.kind} class=${`end ${end.kind}`}>${end.text}</p>
        <h2>Timeline</h2>
        ${steps.length === 0 ? html`<p class="muted">no events recorded yet</p>` : timelineView(steps)}
        <h2>Evidence that opened it</h2>
        ${evidenceView(incident)}
        ${incident.fence?.note ? html`<p class="muted">fence note: ${incident.fence.note}</p>` : null}
        ${fencingAdviceView({ ...incident, fenced: incident.fence !== null }, writable ? 'below' : null, found.fencingFacts)}
        ${
          open && incident.fence === null
            ? actionForm(
                'confirm-fenced',
                `confirm ${incident.host} is powered off`,
                { host: incident.host },
                {
                  writable,
                  note: true,
                  reportingOverride: true,
                  warning: `Only if you checked that ${incident.host} is POWERED OFF: lifeguard takes this as proof of fencing and evacuates its instances. If it still runs, they run twice on the same disks.`,
                },
              )
            : null
        }
        ${open ? actionForm('rehabilitate', `rehabilitate ${incident.host}`, { host: incident.host }, { writable }) : null}
      </div>`;
    }),
  );
}
