import type { ServiceView } from '../services/categorise.ts';
import { shortHostname } from '../services/short-hostname.ts';
import type { GateSnapshot } from './gate-snapshot.ts';

/** The host's `nova-compute` service in the snapshot (matched by short hostname), or null. */
export function serviceOfHost(snapshot: GateSnapshot, host: string): ServiceView | null {
  const short = shortHostname(host);
  return (
    snapshot.services.find((service) => service.host === host) ??
    snapshot.services.find((service) => service.shortHost === short) ??
    null
  );
}
