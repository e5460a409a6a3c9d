/** An incident as far as the advice on a failing fence needs it. */
export interface FencingState {
  readonly id: string;
  readonly host: string;
  readonly state: string;
  /** Whether a fence proof is recorded. */
  readonly fenced: boolean;
}

/**
 * What to do while fencing keeps failing (an incident `failed` or still `fencing` without a fence
 * proof): the lines to print, or an empty list when the incident needs no advice. The way forward is
 * an operator's confirmation, once the host is checked off or isolated.
 */
export function fencingAdvice(incident: FencingState): string[] {
  if (incident.fenced || (incident.state !== 'failed' && incident.state !== 'fencing')) return [];
  return [
    `Fencing ${incident.host} has not succeeded (incident ${incident.id}, ${incident.state}): nothing is evacuated until it is fenced.`,
    `First check that ${incident.host} is really powered off (BMC, PDU outlet, rack power, console) or cut off from`,
    'the network and its storage. Then the way forward is:',
    `  lifeguard host confirm-fenced ${incident.host} --operator <your name>`,
    'It is refused while the host still reports to Nova or sends heartbeats.',
  ];
}
