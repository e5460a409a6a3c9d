// The instance loop's decision (nextInstanceAction) and the evacuation policy it follows, as pure
// functions: no Nova, no Redis, no clock (docs/instance-ha-rules.md#evacuation-policy).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EvacuationMode } from '@lifeguard/contracts';
import { Migration, Server } from '@lifeguard/openstack';
import {
  type EvacuationPolicy,
  evacuationPolicy,
  type InstanceDecision,
  type InstanceEvacuationProgress,
  type InstanceSnapshot,
  MAX_CONSECUTIVE_API_ERRORS,
  NO_PROGRESS,
  nextInstanceAction,
} from '../src/index.ts';

const NOW = Date.parse('2026-12-01T10:00:00Z');
const TIMEOUT_SECONDS = 300;
const RETRIES = 3;

const MODES: ReadonlyArray<EvacuationMode> = ['traditional', 'smart', 'orchestrated'];
const FOLLOWED: ReadonlyArray<EvacuationMode> = ['smart', 'orchestrated'];

function policyOf(mode: EvacuationMode): EvacuationPolicy {
  return evacuationPolicy({
    smartEvacuation: mode === 'smart',
    orchestratedRestart: mode === 'orchestrated',
    evacuationRetries: RETRIES,
    evacuationTimeoutSeconds: TIMEOUT_SECONDS,
  });
}

const server = (host: string, task: string | null = null, status = 'ACTIVE') =>
  Server.parse({ id: 'vm', name: 'vm', status, 'OS-EXT-SRV-ATTR:host': host, 'OS-EXT-STS:task_state': task });
const migration = (status: string, created = '2026-12-01T09:58:00.000000') =>
  Migration.parse({
    id: 7,
    instance_uuid: 'vm',
    source_compute: 'compute-1',
    status,
    migration_type: 'evacuation',
    created_at: created,
  });

const landed = { kind: 'landed', host: 'compute-2' } as const satisfies InstanceDecision;
const evacuate = {
  kind: 'evacuate',
  reason: 'no evacuation under way',
  previous: null,
  noValidHost: false,
} as const;

/** An accepted evacuate that went nowhere: its migration ended in error. */
const failed = {
  kind: 'evacuate',
  reason: 'evacuation migration error',
  previous: null,
  noValidHost: false,
} as const;

/** A snapshot of a look at Nova (by default the server idle on the failed host, nothing under way). */
function seen(
  decision: InstanceDecision,
  options: {
    progress?: Partial<InstanceEvacuationProgress>;
    on?: ReturnType<typeof server>;
    latest?: ReturnType<typeof migration> | null;
    at?: number;
    extra?: Partial<InstanceSnapshot>;
  } = {},
): InstanceSnapshot {
  return {
    target: { failedHost: 'compute-1', targetHost: 'compute-9' },
    progress: { ...NO_PROGRESS, ...options.progress },
    now: NOW,
    observation: {
      kind: 'seen',
      look: { server: options.on ?? server('compute-1'), latest: options.latest ?? null, decision },
      at: options.at ?? NOW,
    },
    ...options.extra,
  };
}

const sent = { attempts: 1, errors: 0, awaitingResult: true, startedAt: '2026-12-01T09:59:00.000Z' };
const minutesAgo = (minutes: number) => new Date(NOW - minutes * 60_000).toISOString();

describe('the evacuation policy of config.yaml', () => {
  it('traditional (SMART_EVACUATION and ORCHESTRATED_RESTART off): done at accept, the host job verifies', () => {
    assert.deepEqual(policyOf('traditional'), {
      mode: 'traditional',
      retries: RETRIES,
      timeoutSeconds: TIMEOUT_SECONDS,
      maxConsecutiveApiErrors: MAX_CONSECUTIVE_API_ERRORS,
      followsEvacuationToCompletion: false,
      keepsLockAfterAcceptance: true,
      instanceEvacuatedAnnouncedBy: 'host-verification',
      failedAttempt: 'fails-instance',
      failedInstanceStopsHost: false,
      phases: 'one',
    });
  });

  it('smart (SMART_EVACUATION): followed to completion, retried, a failure stops the host', () => {
    assert.deepEqual(policyOf('smart'), {
      mode: 'smart',
      retries: RETRIES,
      timeoutSeconds: TIMEOUT_SECONDS,
      maxConsecutiveApiErrors: MAX_CONSECUTIVE_API_ERRORS,
      followsEvacuationToCompletion: true,
      keepsLockAfterAcceptance: false,
      instanceEvacuatedAnnouncedBy: 'instance-job',
      failedAttempt: 'retried',
      failedInstanceStopsHost: true,
      phases: 'one',
    });
  });

  it('orchestrated (ORCHESTRATED_RESTART, with or without SMART_EVACUATION): as smart, in restart-priority phases', () => {
    for (const smartEvacuation of [false, true]) {
      const policy = evacuationPolicy({
        smartEvacuation,
        orchestratedRestart: true,
        evacuationRetries: RETRIES,
        evacuationTimeoutSeconds: TIMEOUT_SECONDS,
      });
      assert.deepEqual(policy, { ...policyOf('smart'), mode: 'orchestrated', phases: 'restart-priority' });
    }
  });

  it('is frozen', () => {
    assert.ok(Object.isFrozen(policyOf('smart')));
  });
});

describe('nextInstanceAction, every mode', () => {
  for (const mode of MODES) {
    const policy = policyOf(mode);
    describe(mode, () => {
      it('waits a poll after a failed read, and fails at MAX_CONSECUTIVE_API_ERRORS in a row', () => {
        const failed = (apiErrors: number): InstanceSnapshot => ({
          ...seen(evacuate),
          observation: { kind: 'read-failed', apiErrors, message: 'connect ECONNREFUSED' },
        });
        assert.deepEqual(nextInstanceAction(policy, failed(MAX_CONSECUTIVE_API_ERRORS - 1)), {
          kind: 'wait',
          wait: 'poll',
          why: 'read-failed',
        });
        assert.deepEqual(nextInstanceAction(policy, failed(MAX_CONSECUTIVE_API_ERRORS)), {
          kind: 'fail',
          reason: `${MAX_CONSECUTIVE_API_ERRORS} consecutive Nova API errors: connect ECONNREFUSED`,
        });
      });

      it('ends a server its owner deleted as deleted, also after an accepted evacuate', () => {
        for (const progress of [{}, sent]) {
          const snapshot: InstanceSnapshot = {
            ...seen(evacuate, { progress }),
            observation: { kind: 'deleted' },
          };
          assert.deepEqual(nextInstanceAction(policy, snapshot), { kind: 'done-deleted' });
        }
      });

      it('reads the stop flag before a first evacuate, and is skipped when it is raised', () => {
        assert.deepEqual(nextInstanceAction(policy, seen(evacuate)), { kind: 'read-stop-flag' });
        assert.deepEqual(nextInstanceAction(policy, seen(evacuate, { extra: { stopped: true } })), {
          kind: 'done-skipped',
        });
        assert.deepEqual(nextInstanceAction(policy, seen(evacuate, { extra: { stopped: false } })), {
          kind: 'recheck-host',
        });
      });

      it('looks at the world again before every evacuate: refuse fails, defer waits a poll', () => {
        const refused = seen(evacuate, {
          extra: { stopped: false, recheck: { kind: 'refuse', reason: 'its compute service is up' } },
        });
        assert.deepEqual(nextInstanceAction(policy, refused), {
          kind: 'fail',
          reason: 'compute-1 may no longer be evacuated: its compute service is up',
        });
        const deferred = seen(evacuate, {
          extra: { stopped: false, recheck: { kind: 'defer', reason: 'THRESHOLD exceeded' } },
        });
        assert.deepEqual(nextInstanceAction(policy, deferred), {
          kind: 'wait',
          wait: 'poll',
          why: 'deferred',
          reason: 'THRESHOLD exceeded',
        });
      });

      it('takes the evacuate claim once the re-check says go, and sends only as its verdict allows', () => {
        const go = { stopped: false, recheck: { kind: 'go' } } as const;
        assert.deepEqual(nextInstanceAction(policy, seen(evacuate, { extra: go })), { kind: 'take-claim' });
        const after = (
          claim: InstanceSnapshot['claim'],
          latest: ReturnType<typeof migration> | null = null,
        ) => nextInstanceAction(policy, seen(evacuate, { latest, extra: { ...go, claim } })).kind;
        assert.equal(after({ kind: 'mine', generation: 3 }), 'send-evacuate');
        assert.equal(after({ kind: 'taken', generation: 1, previous: null }), 'send-evacuate');
        assert.equal(after({ kind: 'taken', generation: 2, previous: null }), 'look-again');
        const held = {
          kind: 'held',
          generation: 1,
          holder: { token: 'w:1', name: 'worker-a' },
          expiresInMilliseconds: 90_500,
        } as const;
        assert.deepEqual(nextInstanceAction(policy, seen(evacuate, { extra: { ...go, claim: held } })), {
          kind: 'wait',
          wait: 'poll',
          why: 'claimed',
          reason:
            'worker-a holds the evacuate claim and Nova shows no evacuation of it yet; waiting for one (the claim runs out in 91 s)',
        });
        assert.deepEqual(
          nextInstanceAction(
            policy,
            seen(failed, { latest: migration('error'), extra: { ...go, claim: held } }),
          ),
          {
            kind: 'wait',
            wait: 'poll',
            why: 'claimed',
            reason: 'worker-a holds the evacuate claim; watching its evacuation (migration 7 error)',
          },
        );
      });

      it('sends the first evacuate to the reserved host, resetting only a server with a task state', () => {
        const go = {
          stopped: false,
          recheck: { kind: 'go' },
          claim: { kind: 'mine', generation: 1 },
        } as const;
        assert.deepEqual(nextInstanceAction(policy, seen(evacuate, { extra: go })), {
          kind: 'send-evacuate',
          targetHost: 'compute-9',
          resetFirst: false,
          watchingSince: new Date(NOW).toISOString(),
        });
        const busy = seen(evacuate, { on: server('compute-1', 'rebuilding'), extra: go });
        assert.equal((nextInstanceAction(policy, busy) as { resetFirst: boolean }).resetFirst, true);
      });

      it('sends a later evacuate without a target host, always reset first, watching since the first', () => {
        const retry = seen(evacuate, {
          progress: { attempts: 1, errors: 1, startedAt: minutesAgo(1) },
          extra: { recheck: { kind: 'go' }, claim: { kind: 'mine', generation: 1 } },
        });
        assert.deepEqual(nextInstanceAction(policy, retry), {
          kind: 'send-evacuate',
          targetHost: null,
          resetFirst: true,
          watchingSince: minutesAgo(1),
        });
      });

      it('does not read the stop flag once an evacuate was sent', () => {
        const retry = seen(evacuate, { progress: { attempts: 1, errors: 1, startedAt: minutesAgo(1) } });
        assert.deepEqual(nextInstanceAction(policy, retry), { kind: 'recheck-host' });
      });

      it('fails once EVACUATION_RETRIES attempts failed, before any other read', () => {
        const spent = seen(evacuate, {
          progress: { attempts: RETRIES, errors: RETRIES, startedAt: minutesAgo(1) },
        });
        assert.deepEqual(nextInstanceAction(policy, spent), {
          kind: 'fail',
          reason: `evacuation failed ${RETRIES} times (EVACUATION_RETRIES ${RETRIES}); last: no evacuation under way`,
        });
      });
    });
  }
});

describe('nextInstanceAction, traditional mode: done when Nova accepts', () => {
  const policy = policyOf('traditional');

  it('a landed instance is done as accepted (or already evacuated), for the host job to verify', () => {
    const latest = migration('done');
    assert.deepEqual(nextInstanceAction(policy, seen(landed, { on: server('compute-2'), latest })), {
      kind: 'done-accepted',
      outcome: 'already-evacuated',
      migration: latest,
    });
    assert.deepEqual(nextInstanceAction(policy, seen(landed, { progress: sent, latest })), {
      kind: 'done-accepted',
      outcome: 'accepted',
      migration: latest,
    });
  });

  it('an evacuation under way is done as accepted, and EVACUATION_TIMEOUT is not judged here', () => {
    const latest = migration('pre-migrating');
    const late = seen(
      { kind: 'in-progress', migration: latest },
      {
        progress: { ...sent, startedAt: minutesAgo(60) },
        latest,
      },
    );
    assert.deepEqual(nextInstanceAction(policy, late), {
      kind: 'done-accepted',
      outcome: 'accepted',
      migration: latest,
    });
  });

  it('an accepted evacuate ends the job as accepted, recording the attempt', () => {
    const snapshot = seen(evacuate, { extra: { answer: { ok: true, requestId: 'req-1' } } });
    assert.deepEqual(nextInstanceAction(policy, snapshot), {
      kind: 'done-accepted',
      outcome: 'accepted',
      migration: null,
      save: { attempts: 1, awaitingResult: true, novaRequestId: 'req-1' },
    });
  });

  it('a refused evacuate fails the instance at once', () => {
    const snapshot = seen(evacuate, {
      extra: { answer: { ok: false, requestId: 'req-1', message: 'HTTP 409: Conflict' } },
    });
    assert.deepEqual(nextInstanceAction(policy, snapshot), {
      kind: 'fail',
      reason: 'evacuate refused: HTTP 409: Conflict',
      save: { attempts: 1, errors: 1, novaRequestId: 'req-1' },
    });
  });

  it('an accepted evacuate that went nowhere (a retried job) fails the instance at once', () => {
    assert.deepEqual(nextInstanceAction(policy, seen(failed, { progress: sent })), {
      kind: 'fail',
      reason: 'evacuation migration error',
      save: { awaitingResult: false, errors: 1 },
      failedAttempt: 'evacuation migration error',
    });
  });
});

describe('nextInstanceAction, smart and orchestrated mode: followed to completion', () => {
  for (const mode of FOLLOWED) {
    const policy = policyOf(mode);
    describe(mode, () => {
      it('a landed instance is settled (its state restored), however late it is seen', () => {
        assert.deepEqual(nextInstanceAction(policy, seen(landed, { on: server('compute-2') })), {
          kind: 'settle',
          outcome: 'already-evacuated',
        });
        const late = seen(landed, { progress: { ...sent, startedAt: minutesAgo(60) } });
        assert.deepEqual(nextInstanceAction(policy, late), { kind: 'settle', outcome: 'evacuated' });
      });

      it('watches an evacuation under way a poll at a time', () => {
        const latest = migration('pre-migrating');
        const watching = seen({ kind: 'in-progress', migration: latest }, { progress: sent, latest });
        assert.deepEqual(nextInstanceAction(policy, watching), {
          kind: 'wait',
          wait: 'poll',
          why: 'in-progress',
        });
      });

      it('on a resume, records when watching started from the migration, or now without one', () => {
        const latest = migration('pre-migrating', '2026-12-01T09:58:00.000000');
        const resumed = seen({ kind: 'in-progress', migration: latest }, { latest });
        assert.deepEqual(nextInstanceAction(policy, resumed), {
          kind: 'wait',
          wait: 'poll',
          why: 'in-progress',
          save: { startedAt: '2026-12-01T09:58:00.000Z' },
        });
        const rebuilding = seen(
          { kind: 'in-progress', migration: null },
          { on: server('compute-2', 'rebuilding') },
        );
        assert.deepEqual(nextInstanceAction(policy, rebuilding), {
          kind: 'wait',
          wait: 'poll',
          why: 'in-progress',
          save: { startedAt: new Date(NOW).toISOString() },
        });
      });

      it('fails for EVACUATION_TIMEOUT only a look that shows it not landed, judged at that look', () => {
        const latest = migration('pre-migrating');
        const decision = { kind: 'in-progress', migration: latest } as const;
        const startedAt = new Date(NOW - TIMEOUT_SECONDS * 1000).toISOString();
        const options = {
          progress: { ...sent, startedAt },
          latest,
          on: server('compute-5', 'rebuild_spawning', 'REBUILD'),
        };
        assert.deepEqual(nextInstanceAction(policy, seen(decision, { ...options, at: NOW })), {
          kind: 'wait',
          wait: 'poll',
          why: 'in-progress',
        });
        assert.deepEqual(nextInstanceAction(policy, seen(decision, { ...options, at: NOW + 1 })), {
          kind: 'fail',
          reason: `not evacuated within EVACUATION_TIMEOUT (${TIMEOUT_SECONDS} s): its evacuation is still under way (REBUILD on compute-5, task_state rebuild_spawning, migration pre-migrating)`,
        });
        const failedAttempt = {
          kind: 'evacuate',
          reason: 'evacuation migration error',
          previous: null,
          noValidHost: false,
        } as const;
        assert.equal(
          nextInstanceAction(policy, seen(failedAttempt, { progress: { ...sent, startedAt }, at: NOW + 1 }))
            .kind,
          'fail',
        );
      });

      it('an accepted evacuate waits the first-check wait, recording the attempt', () => {
        const snapshot = seen(evacuate, { extra: { answer: { ok: true, requestId: 'req-1' } } });
        assert.deepEqual(nextInstanceAction(policy, snapshot), {
          kind: 'wait',
          wait: 'first-check',
          why: 'accepted',
          save: { attempts: 1, awaitingResult: true, novaRequestId: 'req-1' },
        });
      });

      it('a refused evacuate is a failed attempt: a poll later it is evacuated again, at EVACUATION_RETRIES it fails', () => {
        const answer = { ok: false, requestId: 'req-2', message: 'HTTP 400: Bad Request' } as const;
        assert.deepEqual(nextInstanceAction(policy, seen(evacuate, { extra: { answer } })), {
          kind: 'wait',
          wait: 'poll',
          why: 'refused',
          save: { attempts: 1, errors: 1, novaRequestId: 'req-2' },
        });
        const last = seen(evacuate, { progress: { attempts: 2, errors: RETRIES - 1 }, extra: { answer } });
        assert.deepEqual(nextInstanceAction(policy, last), {
          kind: 'fail',
          reason: `evacuation failed ${RETRIES} times (EVACUATION_RETRIES ${RETRIES}); last: evacuate refused: HTTP 400: Bad Request`,
          save: { attempts: 3, errors: RETRIES, novaRequestId: 'req-2' },
        });
      });

      it('an accepted evacuate that went nowhere is a failed attempt, recorded before the world is looked at again', () => {
        assert.deepEqual(nextInstanceAction(policy, seen(failed, { progress: sent })), {
          kind: 'recheck-host',
          save: { awaitingResult: false, errors: 1 },
          failedAttempt: 'evacuation migration error',
        });
        const noRoom = {
          kind: 'evacuate',
          reason:
            'evacuation migration error: Nova says "No valid host was found. There are not enough hosts available."',
          previous: null,
          noValidHost: true,
        } as const;
        assert.deepEqual(nextInstanceAction(policy, seen(noRoom, { progress: sent })), {
          kind: 'fail',
          reason:
            'evacuation migration error: Nova says "No valid host was found. There are not enough hosts available."; not retried: no compute host can take it until an operator makes room',
          save: { awaitingResult: false, errors: 1 },
          failedAttempt:
            'evacuation migration error: Nova says "No valid host was found. There are not enough hosts available."',
        });
        const last = seen(failed, { progress: { ...sent, errors: RETRIES - 1 } });
        assert.deepEqual(nextInstanceAction(policy, last), {
          kind: 'fail',
          reason: `evacuation failed ${RETRIES} times (EVACUATION_RETRIES ${RETRIES}); last: evacuation migration error`,
          save: { awaitingResult: false, errors: RETRIES },
          failedAttempt: 'evacuation migration error',
        });
      });
    });
  }
});
