import { formatAge, formatDuration, formatTime, JOB_STATES, type SystemStatus } from '@lifeguard/cli';
import type { VNode } from 'preact';
import type { DeadLetterListing } from '../readers/dead-letter-cache.ts';
import type { QueuesView } from '../readers/queues.ts';
import { actionForm } from './action-form.ts';
import { html } from './html.ts';
import { badge, mainSection, table, whenSeen } from './layout.ts';

function workersView(status: SystemStatus, now: Date): VNode {
  return html`<div>
    <h2>Worker kinds</h2>
    ${table(
      ['kind', 'live', 'state', 'detail'],
      status.workerKinds.map((kind) => [
        kind.kind,
        kind.live,
        kind.missing === null
          ? badge('unknown', 'muted')
          : kind.missing
            ? badge('MISSING', 'bad')
            : badge('ok', 'ok'),
        kind.detail,
      ]),
      'worker-kinds',
    )}
    <h2>Worker processes (${status.workers.length})</h2>
    ${table(
      ['service', 'instance', 'host', 'pid', 'health server', 'started', 'health'],
      status.workers.map((worker) => [
        worker.service,
        worker.instance,
        worker.host,
        worker.pid,
        `${worker.httpHost}:${worker.httpPort}`,
        formatAge(worker.startedAt, now),
        badge(
          worker.readiness,
          worker.readiness === 'ready' ? 'ok' : worker.readiness === 'not-probed' ? 'muted' : 'bad',
        ),
      ]),
      'workers',
    )}
    <p id="leader">
      ${
        status.leader
          ? `node monitor leader ${status.leader.holder}, fencing token ${status.leader.token}, lease ${formatDuration(status.leader.expiresInMilliseconds)} left`
          : `no node monitor leader (nobody holds ${status.leaderKey})`
      }
    </p>
    <h2>BullMQ queues</h2>
    ${table(
      ['queue', ...JOB_STATES],
      status.jobQueues.map((queue) => [queue.queue, ...JOB_STATES.map((state) => queue.counts[state])]),
      'job-queues',
    )}
    <h2>RabbitMQ queues</h2>
    ${
      status.brokerQueues === null
        ? html`<p class="unseen" data-unseen="RabbitMQ">cannot see the RabbitMQ queues: ${status.brokerError ?? 'RabbitMQ could not be read'}</p>`
        : table(
            ['queue', 'ready messages', 'consumers'],
            status.brokerQueues.map((queue) => [
              queue.queue,
              queue.declared ? queue.messages : 'not declared',
              queue.declared ? queue.consumers : null,
            ]),
            'broker-queues',
          )
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
    ${table(
      ['id', 'reason', 'from queue', 'routing key', 'dead-lettered', 'by', 'replays', 'body', ''],
      listing.letters.map((letter) => [
        letter.id,
        letter.reason,
        letter.queue,
        letter.routingKey,
        formatTime(letter.deadLetteredAt),
        letter.deadLetteredBy,
        letter.replayCount,
        html`<code>${letter.bodyPreview}</code>`,
        actionForm('replay', 'replay', { id: letter.id }, { writable }),
      ]),
      'dead-letters',
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
