import { disabledGate, judgeAggregateLimits, thresholdGate } from '@lifeguard/instance-ha';
import { CONTINUE, type CycleGate, cycleSnapshot, hostsOf, remainingHosts, stop } from './admission-run.ts';
import { applyRateLimit } from './rate-limit.ts';

/**
 * G6 THRESHOLD (docs/instance-ha-rules.md#threshold): instance-ha's thresholdGate, the gate every fence
 * and evacuation re-checks, judged once for the cycle with its surviving failed hosts and suspects;
 * strict `>`; it stops the whole cycle, resumes too.
 */
export const thresholdCycleGate: CycleGate = {
  name: 'threshold',
  run(run) {
    const { config, logger } = run.dependencies;
    if (run.categorisation.services.length === 0 || run.survivors.length === 0) return CONTINUE;
    const { judgement, result } = thresholdGate.judgeCycle(cycleSnapshot(run), {
      survivors: hostsOf(run.survivors),
      suspects: run.suspects,
    });
    run.decision.threshold = result;
    logger.info(
      {
        gate: 'threshold',
        ...result,
        impactedHosts: undefined,
        threshold: config.thresholdPercent,
        verdict: judgement.verdict,
        reason: judgement.reason,
      },
      `Threshold: ${result.impacted}/${result.total} impacted = ${result.percent.toFixed(1)}% (THRESHOLD ${config.thresholdPercent}%): ${judgement.verdict === 'pass' ? 'allowed' : 'blocked'}`,
    );
    if (judgement.verdict === 'pass') return CONTINUE;
    run.decision.thresholdExceeded.push({
      scope: 'global',
      aggregate: null,
      impacted: result.impacted,
      total: result.total,
      percent: result.percent,
      threshold: config.thresholdPercent,
      hosts: hostsOf(run.survivors),
    });
    return stop('threshold');
  },
};

/** G7 per-aggregate `instanceha:max_failures` (resume candidates bypass it), counted as every re-check counts. */
export const aggregateLimitCycleGate: CycleGate = {
  name: 'aggregate-threshold',
  run(run) {
    const { config, logger } = run.dependencies;
    const aggregates = run.aggregates;
    if (!config.taggedAggregates || aggregates === null || run.survivors.length === 0) return CONTINUE;
    // The count every later action's re-check makes (judgeAggregateLimits): hosts being handled count
    // while impacted, not while back up and reporting; silent and failed hosts count whether or not
    // they are admitted.
    const limits = judgeAggregateLimits(cycleSnapshot(run), hostsOf(run.survivors));
    run.decision.aggregateLimits = limits;
    for (const warning of limits.warnings) {
      logger.warn(warning, 'invalid instanceha:max_failures on an aggregate; ignored');
    }
    for (const trip of limits.trips) {
      run.decision.thresholdExceeded.push({
        scope: 'aggregate',
        aggregate: trip.aggregate,
        impacted: trip.impacted,
        total: trip.total,
        percent: trip.total === 0 ? 0 : (trip.impacted / trip.total) * 100,
        threshold: trip.maxFailures,
        hosts: [...trip.hosts],
      });
      logger.warn(
        { gate: 'aggregate-threshold', ...trip },
        `Aggregate ${trip.aggregate}: ${trip.impacted} impacted > instanceha:max_failures ${trip.maxFailures}: blocked`,
      );
    }
    run.survivors = run.survivors.filter((service) => !limits.blocked.has(service.host));
    return CONTINUE;
  },
};

/** G8 MAX_HOSTS_PER_CYCLE (resume candidates not counted); the cycle ends when nobody is left. */
export const rateLimitCycleGate: CycleGate = {
  name: 'rate-limit',
  run(run) {
    const { config, logger } = run.dependencies;
    const { admitted, deferred } = applyRateLimit(run.survivors, config.maxHostsPerCycle);
    if (deferred.length > 0) {
      run.decision.blocked.push({
        gate: 'rate-limit',
        hosts: hostsOf(deferred),
        reason: `MAX_HOSTS_PER_CYCLE ${config.maxHostsPerCycle}: ${deferred.length} host(s) deferred`,
      });
      logger.warn(
        { gate: 'rate-limit', deferred: hostsOf(deferred) },
        `Rate limit: ${deferred.length} host(s) deferred`,
      );
    }
    run.survivors = admitted;
    return admitted.length + run.resume.length === 0 ? stop(null) : CONTINUE;
  },
};

/** DISABLED (docs/instance-ha-rules.md#disabled): instance-ha's disabledGate, the one every action re-checks. */
export const disabledCycleGate: CycleGate = {
  name: 'disabled',
  run(run) {
    // DISABLED holds every host alike: judged once for the cycle.
    const judgement = disabledGate.judge(cycleSnapshot(run), '');
    if (judgement.verdict === 'pass') return CONTINUE;
    run.dependencies.logger.warn({ gate: 'disabled' }, 'lifeguard DISABLED is true, not evacuating');
    run.decision.blocked.push({ gate: 'disabled', hosts: remainingHosts(run), reason: judgement.reason });
    return stop('disabled');
  },
};

/** G9 scheduler sanity: no nova-scheduler up means fencing would only add downtime (a failed read proceeds). */
export const schedulerCycleGate: CycleGate = {
  name: 'scheduler',
  async run(run) {
    const { logger } = run.dependencies;
    const schedulers = await run.schedulersRead;
    if (schedulers instanceof Error) {
      logger.warn({ err: schedulers }, 'nova-scheduler check failed; proceeding');
      return CONTINUE;
    }
    if (schedulers.length === 0 || schedulers.some((scheduler) => scheduler.state === 'up')) return CONTINUE;
    logger.warn(
      { gate: 'scheduler' },
      'no nova-scheduler is up: fencing now would only add downtime; skipping',
    );
    run.decision.blocked.push({
      gate: 'scheduler-down',
      hosts: remainingHosts(run),
      reason: `none of ${schedulers.length} nova-scheduler services is up`,
    });
    return stop('scheduler-down');
  },
};
