import type { Incident } from '@lifeguard/instance-ha';

/** `power-off-confirmed (redfish)`, `operator-confirmed (by alice)`, `kdump (expected)`, or `-` when not fenced. */
export function incidentFenceText(incident: Incident): string {
  const fence = incident.fence;
  if (!fence) return incident.kdumpFenced ? 'kdump (expected)' : '-';
  return `${fence.proof} (${fence.proof === 'operator-confirmed' ? `by ${fence.by ?? 'unknown'}` : fence.method})`;
}
