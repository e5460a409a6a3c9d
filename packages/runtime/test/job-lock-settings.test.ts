import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { z } from 'zod';
import {
  ConfigError,
  environmentSource,
  jobLockOptions,
  jobLockSettingsShape,
  parseConfig,
  refuseRenamedSettings,
} from '../src/index.ts';

describe('the job-lock settings both job workers share', () => {
  const schema = z.object(jobLockSettingsShape);

  it('give BullMQ lockDuration and stalledInterval in milliseconds from seconds, and the worker default takeovers', () => {
    const settings = parseConfig(schema, [
      environmentSource({ LIFEGUARD_JOB_LOCK_SECONDS: '3', LIFEGUARD_JOB_STALLED_CHECK_SECONDS: '0.5' }),
    ]);
    assert.deepEqual(jobLockOptions(settings, 5), {
      lockDuration: 3000,
      stalledInterval: 500,
      maxStalledCount: 5,
    });
  });

  it('default to a 30 s lock and a 30 s stalled-job check, and take LIFEGUARD_JOB_MAX_STALLED_COUNT over the default', () => {
    const settings = parseConfig(schema, [environmentSource({ LIFEGUARD_JOB_MAX_STALLED_COUNT: '0' })]);
    assert.deepEqual(jobLockOptions(settings, 2), {
      lockDuration: 30_000,
      stalledInterval: 30_000,
      maxStalledCount: 0,
    });
  });

  it('refuse a lock below a second, naming the setting', () => {
    assert.throws(
      () => parseConfig(schema, [environmentSource({ LIFEGUARD_JOB_LOCK_SECONDS: '0.2' })]),
      (error: unknown) =>
        error instanceof ConfigError && /LIFEGUARD_JOB_LOCK_SECONDS \(environment\)/.test(error.message),
    );
  });

  for (const [old, replacement] of [
    ['LIFEGUARD_FENCING_LOCK_SECONDS', 'LIFEGUARD_JOB_LOCK_SECONDS'],
    ['LIFEGUARD_JOB_LOCK_MILLISECONDS', 'LIFEGUARD_JOB_LOCK_SECONDS \\(in seconds\\)'],
    ['LIFEGUARD_FENCING_MAX_STALLED_COUNT', 'LIFEGUARD_JOB_MAX_STALLED_COUNT'],
  ] as const) {
    it(`refuse ${old}, an earlier name, naming the one to set instead (never ignore it in silence)`, () => {
      assert.throws(
        () => refuseRenamedSettings([environmentSource({ [old]: '120' })]),
        (error: unknown) =>
          error instanceof ConfigError &&
          new RegExp(`${old} \\(environment\\): renamed: set ${replacement} instead`).test(error.message),
      );
    });
  }

  it('let an empty earlier name pass (an unset variable in a Compose file)', () => {
    refuseRenamedSettings([environmentSource({ LIFEGUARD_FENCING_LOCK_SECONDS: '' })]);
  });
});
