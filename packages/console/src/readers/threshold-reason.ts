import type { LifeguardEvent } from '@lifeguard/contracts';

type ThresholdExceeded = Extract<LifeguardEvent, { type: 'threshold.exceeded' }>['data'];

/**
 * A `threshold.exceeded` event's reason in words, saying which number is which: THRESHOLD is a
 * percentage of the counted hosts (`4 of 10 hosts impacted: 40.0 % > THRESHOLD 30 %`), an aggregate's
 * `instanceha:max_failures` a count of its hosts (`4 of 6 hosts of aggregate ha-a impacted >
 * instanceha:max_failures 3 hosts`).
 */
export function thresholdReason(data: ThresholdExceeded): string {
  return data.scope === 'global'
    ? `${data.impacted} of ${data.total} hosts impacted: ${data.percent.toFixed(1)} % > THRESHOLD ${data.threshold} %`
    : `${data.impacted} of ${data.total} hosts of aggregate ${data.aggregate ?? '?'} impacted > instanceha:max_failures ${data.threshold} hosts`;
}
