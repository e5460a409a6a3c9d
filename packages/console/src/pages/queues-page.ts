import {
  admissionLines,
  brokerQueuesTable,
  capacityHoldLines,
  deadLettersTable,
  formatTime,
  jobQueuesTable,
  leaderText,
  missingWorkerKindsText,
  type SystemStatus,
  workerKindsTable,
  workersTable,
} from '@lifeguard/operator-views';
import type { VNode } from 'preact';
import type { DeadLetterListing } from '../readers/dead-letter-cache.ts';
import type { QueuesView } from '../readers/queues.ts';
import { actionForm } from './action-form.ts';
import { html } from './html.ts';
import { badge, mainSection, whenSeen } from './layout.ts';
import { tableViewHtml } from './table-view-html.ts';

function admissionView(status: SystemStatus, now: Date): VNode {
  const { heading, lines } = admissionLines(status, now);
  return html`<div id="last-poll">
    <p>${heading}</p>
    ${
      lines.length === 0
        ? null
        : html`<ul>
            ${lines.map(
              (line) =>
                html`<li data-gate=${line.gate}>${line.stopped ? badge('STOPPED', 'bad') : null} ${line.text}</li>`,
            )}
          </ul>`
    }
  </div>`;
}

/** The fences held back for want of room, as `lifeguard status` lists them (nothing when none). */
function capacityHoldsView(status: SystemStatus, now: Date): VNode | null {
  const lines = capacityHoldLines(status, now);
  if (lines.length === 0) return null;
  return html`<ul id="capacity-holds">
    ${status.capacityHolds.map(
      (hold, index) => html`<li data-host=${hold.host}>${badge('NO ROOM', 'bad')} ${lines[index]}</li>`,
    )}
  </ul>`;
}

function workersView(status: SystemStatus, now: Date): VNode {
  const missing = missingWorkerKindsText(status);
  return html`<div>
    <h2>Worker kinds</h2>
    ${tableViewHtml(workerKindsTable(status))}
    ${missing ? html`<p id="missing-worker-kinds">${badge('MISSING', 'bad')} ${missing}</p>` : null}
    <h2>Worker processes (${status.workers.length})</h2>
    ${tableViewHtml(workersTable(status, now))}
    <p id="leader">Node monitor leader: ${leaderText(status)}</p>
    ${admissionView(status, now)}
    ${capacityHoldsView(status, now)}
    <h2>BullMQ queues</h2>
    ${tableViewHtml(jobQueuesTable(status))}
    <h2>RabbitMQ queues</h2>
    ${
      status.brokerQueues === null
        ? html`<p class="unseen" data-unseen="RabbitMQ">cannot see the RabbitMQ queues: ${status.brokerError ?? 'RabbitMQ could not be read'}</p>`
        : tableViewHtml(brokerQueuesTable(status.brokerQueues))
    }
  </div>`;
}

function deadLetterView(listing: DeadLetterListing, writable: boolean): VNode {
  if (listing.count === 0) return html`<p class="muted" id="dead-letters">the dead-letter queue is empty</p>`;
  const note = html`<p class="muted" id="dead-letter-count">
    ${listing.count} message(s)${listing.readAt ? `, listed as read at ${formatTime(listing.readAt)}` : ''}${
      listing.stale || listing.letters === null
        ? ' — the queue changed since: reload the page to read it again (each read counts as a delivery of every message)'
        : ''
    }
  </p>`;
  if (listing.letters === null) return note;
  return html`<div>
    ${note}
    ${tableViewHtml(
      deadLettersTable(listing.letters),
      writable
        ? {
            title: 'write action',
            cell: (letter) => actionForm('replay', 'replay', { id: letter.id }, { writable }),
          }
        : undefined,
    )}
  </div>`;
}

/** The queues and workers page: every worker and its health, BullMQ and RabbitMQ queues, dead letters. */
export function queuesPage(view: QueuesView, writable: boolean, now: Date = new Date()): VNode {
  return mainSection(
    'Queues and workers',
    whenSeen(view.status, 'the workers and queues', (status) => workersView(status, now)),
    html`<h2>Dead-letter queue</h2>`,
    whenSeen(view.deadLetters, 'the dead-letter queue', (listing) => deadLetterView(listing, writable)),
  );
}
