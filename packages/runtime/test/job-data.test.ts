import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CapturedLines } from '@lifeguard/testing';
import { UnrecoverableError } from 'bullmq';
import { z } from 'zod';
import { createLogger, parseJobData } from '../src/index.ts';

const HostJobData = z.object({ host: z.string(), incidentId: z.string() });

describe('parseJobData', () => {
  it('returns the parsed data of a job that matches its contract', () => {
    const lines = new CapturedLines();
    const logger = createLogger({ service: 'test', destination: lines });
    const data = parseJobData(
      HostJobData,
      { id: 'job-1', data: { host: 'compute-1', incidentId: 'i-1' } },
      'host job data',
      logger,
    );
    assert.deepEqual(data, { host: 'compute-1', incidentId: 'i-1' });
    assert.equal(lines.lines.length, 0);
  });

  it('invalid data fails the job without retry, naming every failing field, and logs it with the job id', () => {
    const lines = new CapturedLines();
    const logger = createLogger({ service: 'test', destination: lines });
    assert.throws(
      () => parseJobData(HostJobData, { id: 'job-2', data: { host: 7 } }, 'host job data', logger),
      (error: unknown) => {
        assert.ok(error instanceof UnrecoverableError);
        assert.match(error.message, /^invalid host job data: host: .*; incidentId: /);
        return true;
      },
    );
    const [record] = lines.records();
    assert.equal(record?.jobId, 'job-2');
    assert.equal(record?.level, 50);
    assert.match(String(record?.msg), /^invalid host job data: host: /);
  });
});
