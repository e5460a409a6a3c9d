import type { ComputeApi } from '@lifeguard/openstack';
import { EventJournal, type RedisClient } from '@lifeguard/runtime';
import { judgeHostReporting, lastHeartbeat } from '../hosts/host-reporting.ts';
import { capacityHoldOf } from './capacity-hold.ts';
import { readFenceJob } from './fence-job.ts';
import type { FencingFacts, FencingState } from './fencing-advice.ts';

/**
 * Reads what the advice on a failing fence is decided from — the incident's fence job in BullMQ and
 * the host's own reports (Nova's service against DELTA, its last heartbeat) — only for an incident
 * that may need advice (`failed` or `fencing` without a fence proof; for an `open` one, whether its
 * fence is held back for want of room, from its events); `{}` otherwise. A read that
 * fails leaves its fact out (null): the advice then falls back to what the incident says.
 */
export async function readFencingFacts(
  connections: {
    readonly redis: RedisClient;
    readonly keyPrefix: string;
    /** Nova's client, asked for only when needed (a tool without OpenStack settings then goes without it). */
    readonly compute: () => ComputeApi;
  },
  incident: FencingState,
  deltaSeconds: number,
  now: Date = new Date(),
): Promise<FencingFacts> {
  const { redis, keyPrefix, compute } = connections;
  if (!incident.fenced && incident.state === 'open') {
    const events = await new EventJournal(redis, keyPrefix).incident(incident.id).catch(() => null);
    return events === null ? {} : { heldBack: capacityHoldOf(incident.state, events), now };
  }
  if (incident.fenced || (incident.state !== 'failed' && incident.state !== 'fencing')) return {};
  const [job, reporting] = await Promise.all([
    readFenceJob(redis, keyPrefix, incident.host, incident.id).catch(() => null),
    Promise.all([
      Promise.resolve().then(() => compute().listServices({ binary: 'nova-compute', host: incident.host })),
      lastHeartbeat(redis, keyPrefix, incident.host),
    ]).then(
      ([services, heartbeat]) => judgeHostReporting(services[0] ?? null, heartbeat, deltaSeconds, now),
      () => null,
    ),
  ]);
  return { job, reporting, now };
}
