import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { serviceProcessSuite } from '../../packages/provisioning-blocks/test/support.ts';
import { recordFaultRow } from './support/fault-table.ts';
import { setRedisMaxMemory } from './support/suite-engines.ts';
import { runWritesRefusedStream } from './support/writes-refused-stream.ts';

const PORTS = 1000;

/**
 * Redis out of memory (`maxmemory` below its use, `noeviction`) in the middle of a provisioning
 * stream (docs/failure-modes.md#redis-out-of-memory): writes are refused, the service says so (error
 * log naming OOM, lifeguard_redis_writes_refused 1, /readyz failing `redis-writes`), completes no port
 * meanwhile and loses none of the requests it could not apply; once memory is available it resumes.
 */
describe('Redis out of memory mid provisioning stream', () => {
  const suite = serviceProcessSuite('fault-redis-oom');

  it(`maxmemory reached during ${PORTS} ports' completions: refused and reported, nothing completed meanwhile, every port ACTIVE once memory is back`, async () => {
    const outcome = await runWritesRefusedStream({
      suite,
      redis: suite.redis,
      label: 'fault-redis-oom',
      ports: PORTS,
      refuse: () => setRedisMaxMemory(1),
      restore: () => setRedisMaxMemory(null),
    });
    const { service } = outcome;
    const errorLine = service.lines.find(
      (line) => line.level === 50 && /OOM/.test(String(line.msg)) && line.maxMemoryPolicy === 'noeviction',
    );
    recordFaultRow({
      fault: 'Redis out of memory (maxmemory, noeviction) mid provisioning stream',
      inFlight: `${PORTS} ports (${outcome.completedWhenRefused} completed when the limit struck)`,
      eventsLost: outcome.eventsLost,
      duplicateEffects: outcome.duplicateEffects,
      secondsToResume: outcome.secondsToResume,
      outcome: `error log "Redis refuses writes: out of memory (OOM ...)", lifeguard_redis_writes_refused 1, /readyz 503; ${outcome.completedAfterWindow - outcome.completedWhenRefused} ports completed while refused`,
    });
    assert.ok(errorLine, 'an error log line naming OOM with the memory policy');
    assert.equal(
      outcome.completedAfterWindow,
      outcome.completedWhenRefused,
      'ports completed while Redis refused writes',
    );
    assert.ok(outcome.completedWhenRefused < PORTS, 'completions were still to come when the limit struck');
    assert.equal(outcome.eventsLost, 0, 'ports without a provisioning.complete event');
    assert.equal(outcome.duplicateEffects, 0, 'ports completed twice under different event ids');
    assert.equal(outcome.readinessAtEnd, 'ok');
    service.child.kill('SIGTERM');
    assert.equal((await service.exited()).code, 0);
  });
});
