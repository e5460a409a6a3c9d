// test-file: runs alone (lowers the maxmemory of the fault suite's own Redis, which every other fault file uses)
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { serviceProcessSuite } from '../../packages/provisioning-blocks/test/support.ts';
import { setRedisMaxMemory } from './support/suite-engines.ts';
import { recordAndCheckWritesRefused, runWritesRefusedStream } from './support/writes-refused-stream.ts';

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
    await recordAndCheckWritesRefused(outcome, {
      fault: 'Redis out of memory (maxmemory, noeviction) mid provisioning stream',
      ports: PORTS,
      struck: 'the limit struck',
      operatorSees: 'error log "Redis refuses writes: out of memory (OOM ...)"',
    });
    assert.ok(errorLine, 'an error log line naming OOM with the memory policy');
  });
});
