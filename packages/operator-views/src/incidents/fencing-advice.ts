import { formatDuration, formatTime } from '../format.ts';
import type { HostReporting } from '../hosts/host-reporting.ts';
import type { CapacityHold } from './capacity-hold.ts';
import type { FenceJobView } from './fence-job.ts';

/** An incident as far as the advice on a failing fence needs it. */
export interface FencingState {
  readonly id: string;
  readonly host: string;
  readonly state: string;
  /** Whether a fence proof is recorded. */
  readonly fenced: boolean;
}

/** What the advice is decided from besides the incident: the fence job and the host's own reports. */
export interface FencingFacts {
  /** The incident's fence job in BullMQ; null when there is none; undefined when it was not read. */
  readonly job?: FenceJobView | null;
  /** Whether the host reports (Nova, heartbeats); undefined or null when that was not read. */
  readonly reporting?: HostReporting | null;
  /** The fence held back for want of room (capacityHoldOf); undefined or null when there is none or it was not read. */
  readonly heldBack?: CapacityHold | null;
  readonly now?: Date;
}

/**
 * The advice's kind: `confirm-fenced`, `rehabilitate`, `wait` while lifeguard is still at it, or
 * `make-room` while the fence is held back because the host's servers would have nowhere to go.
 */
export type FencingAdviceKind = 'confirm-fenced' | 'rehabilitate' | 'wait' | 'make-room';

/**
 * What to do while an incident is `failed` or still `fencing` without a fence proof, or `open` with
 * its fence held back for want of room, from the facts as they are now (docs/cli.md#next-step): none
 * when it needs no advice; `make-room` while the capacity gate holds the fence back; `wait` while a retry or a
 * takeover of the fence job is pending (saying when); `rehabilitate` when the host reports again (it
 * is running: it cannot be fenced, and confirm-fenced would be refused); `confirm-fenced` only when
 * fencing has failed for good (the job's attempts spent, or no job) and the host does not report.
 */
export function fencingAdviceOf(
  incident: FencingState,
  facts: FencingFacts = {},
): { kind: FencingAdviceKind; lines: string[] } | null {
  if (incident.fenced) return null;
  if (facts.heldBack && incident.state === 'open')
    return { kind: 'make-room', lines: makeRoom(incident, facts.heldBack) };
  if (incident.state !== 'failed' && incident.state !== 'fencing') return null;
  const { host } = incident;
  if (facts.reporting?.reporting) {
    return {
      kind: 'rehabilitate',
      lines: [
        `${host} reports again (${facts.reporting.evidence.join('; ')}): it is running, so lifeguard does not fence it`,
        `and confirm-fenced would be refused (incident ${incident.id}, ${incident.state}). Once you have checked it is healthy:`,
        `  lifeguard host rehabilitate ${host} --operator <your name>`,
      ],
    };
  }
  const pending = pendingFence(incident, facts);
  if (pending) return { kind: 'wait', lines: pending };
  return {
    kind: 'confirm-fenced',
    lines: [
      `Fencing ${host} has not succeeded (incident ${incident.id}, ${incident.state}${spent(facts.job)}): nothing is evacuated until it is fenced.`,
      `First check that ${host} is really powered off (BMC, PDU outlet, rack power, console) or cut off from`,
      'the network and its storage. Then the way forward is:',
      `  lifeguard host confirm-fenced ${host} --operator <your name>`,
      'It is refused while the host still reports to Nova or sends heartbeats.',
    ],
  };
}

/** A fence held back for want of room: nothing is powered off; what would make room. */
function makeRoom(incident: FencingState, hold: CapacityHold): string[] {
  return [
    `lifeguard holds back the fence of ${incident.host} since ${formatTime(hold.at)}: ${hold.reason}.`,
    `Nothing is powered off while its ${hold.serverCount} server(s) have nowhere to go (incident ${incident.id}); lifeguard`,
    'checks again every POLL and fences as soon as a compute host can take them. To make room, enable a',
    'compute service (openstack compute service set --enable <host> nova-compute), bring a down host back,',
    'or, with RESERVED_HOSTS: true, keep a spare (disabled with a reserved reason) up.',
  ];
}

/** The lines of `fencingAdviceOf`, or none. */
export function fencingAdvice(incident: FencingState, facts: FencingFacts = {}): string[] {
  return fencingAdviceOf(incident, facts)?.lines ?? [];
}

/** While lifeguard is still fencing by itself (a retry due, a job queued, running or to be taken over): what it is doing. */
function pendingFence(incident: FencingState, facts: FencingFacts): string[] | null {
  const job = facts.job;
  if (!job || incident.state !== 'fencing') return null;
  const now = facts.now ?? new Date();
  const attempt = `attempt ${job.attemptsMade} of ${job.attempts}`;
  const wait = `Nothing to do yet; confirm-fenced is the way forward only once every attempt has failed.`;
  if (job.state === 'delayed') {
    const due = job.retryAt ? Date.parse(job.retryAt) - now.getTime() : null;
    const when =
      job.retryAt === null
        ? 'soon'
        : `at ${formatTime(job.retryAt)}${due !== null && due > 0 ? ` (in ${formatDuration(due)})` : ''}`;
    return [
      `Fencing ${incident.host} failed on ${attempt}; lifeguard tries again by itself ${when}, checking the host first (incident ${incident.id}).`,
      wait,
    ];
  }
  if (job.state === 'active' && job.lockHeld === false) {
    return [
      `The fencing worker that was fencing ${incident.host} stopped answering (${attempt}); another fencing worker takes the job over`,
      'at its next stalled-job check (LIFEGUARD_JOB_STALLED_CHECK_SECONDS) and checks the world again first.',
      `If no fencing worker runs (lifeguard status), start one. ${wait}`,
    ];
  }
  if (job.state === 'active') return [`A fencing worker is fencing ${incident.host} now (${attempt}).`, wait];
  if (job.state === 'waiting' || job.state === 'prioritized') {
    return [
      `The fence job of ${incident.host} waits for a fencing worker (lifeguard status shows whether one runs).`,
      wait,
    ];
  }
  return null;
}

function spent(job: FenceJobView | null | undefined): string {
  return job && job.state === 'failed' ? `, all ${job.attempts} attempts failed` : '';
}
