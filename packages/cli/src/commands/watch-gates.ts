import type { AdmissionGate, LifeguardEvent } from '@lifeguard/contracts';

/**
 * What an `admission.blocked`, `threshold.exceeded` or `host.capacity.insufficient` event about a host means for someone waiting
 * for lifeguard to act on it:
 * - `final`: lifeguard will not fence or evacuate the host, and waiting does not change that (it is
 *   not evacuable — no servers, no evacuable server, in no evacuable aggregate — or DISABLED is on, or
 *   the host's failure alone goes over THRESHOLD / its aggregate's `instanceha:max_failures`);
 * - `held`: a gate holds the host back for now (rate limit, heartbeat cliff, heartbeats still
 *   arriving, every service stale, no nova-scheduler up, the kdump wait, THRESHOLD with other hosts
 *   down, no room for its servers); `key` tells repeats of the same hold (published every poll cycle) apart from a new one.
 * `why` is one sentence for the operator.
 */
export type GateVerdict =
  | { readonly kind: 'final'; readonly why: string }
  | { readonly kind: 'held'; readonly key: string; readonly why: string };

/** Why gate G5 drops a host (node-monitor's NotEvacuableReason), in words. */
const NOT_EVACUABLE: Readonly<Record<string, string>> = {
  'no-servers': 'it has no servers to evacuate',
  'no-evacuable-servers': 'none of its servers is evacuable (TAGGED_IMAGES / TAGGED_FLAVORS)',
  'not-in-evacuable-aggregate':
    'it is in no aggregate tagged evacuable (TAGGED_AGGREGATES), so lifeguard does not protect it',
};

/** The transient gates, in words (the event's own reason follows). */
const HELD: Readonly<Record<Exclude<AdmissionGate, 'not-evacuable' | 'disabled'>, string>> = {
  'heartbeat-cliff': 'heartbeats fell suddenly (a suspected observer partition): lifeguard waits',
  'host-reachable':
    'the host still sends heartbeats (only nova-compute died): lifeguard does not fence it yet',
  'all-services-stale': 'every compute service looks failed (the data source is suspect): lifeguard waits',
  'mass-event-hold-down':
    'it went silent in a mass event that was blocked: lifeguard waits MASS_EVENT_HOLD_DOWN for it to report again',
  'rate-limit': 'deferred by MAX_HOSTS_PER_CYCLE: admitted in a later poll cycle',
  'scheduler-down': 'no nova-scheduler is up: lifeguard waits for one',
  'kdump-wait': 'waiting for fence_kdump (KDUMP_TIMEOUT)',
};

/**
 * The verdict on an `admission.blocked` / `threshold.exceeded` event naming `host`, or null for any
 * other event.
 */
export function gateVerdict(event: LifeguardEvent, host: string): GateVerdict | null {
  if (event.type === 'admission.blocked') {
    const { gate, reason } = event.data;
    if (gate === 'not-evacuable') {
      // One event covers every host dropped this cycle: its reason lists each distinct reason.
      const reasons = reason
        .split(/,\s*/)
        .filter((each) => each !== '')
        .map((each) => NOT_EVACUABLE[each] ?? each);
      return { kind: 'final', why: `not evacuable: ${reasons.join(', or ')}` };
    }
    if (gate === 'disabled') {
      return { kind: 'final', why: 'DISABLED is true in the node monitor’s configuration (config.yaml)' };
    }
    return { kind: 'held', key: `gate:${gate}`, why: `${HELD[gate]} (${reason})` };
  }
  if (event.type === 'host.capacity.insufficient') {
    return {
      kind: 'held',
      key: 'capacity',
      why: `no room to evacuate (${event.data.reason}): it is not powered off, and lifeguard checks again every POLL`,
    };
  }
  if (event.type === 'threshold.exceeded') {
    const { scope, aggregate, impacted, total, percent, threshold } = event.data;
    const limit =
      scope === 'global'
        ? `THRESHOLD: ${impacted} of ${total} hosts impacted = ${percent.toFixed(1)}% > ${threshold}%`
        : `aggregate ${aggregate}: ${impacted} impacted > instanceha:max_failures ${threshold}`;
    // The host's own failure alone goes over the limit: only its return ends the block.
    const alone = scope === 'global' ? total > 0 && 100 / total > threshold : 1 > threshold;
    if (alone) return { kind: 'final', why: `${limit}, and ${host} alone is over the limit` };
    return {
      kind: 'held',
      key: `threshold:${scope}:${aggregate ?? ''}`,
      why: `${limit}: lifeguard waits until fewer hosts are down`,
    };
  }
  return null;
}
