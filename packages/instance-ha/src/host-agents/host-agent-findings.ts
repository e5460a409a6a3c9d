/** What the host agents said, as the node monitor reads it back (per network, per host). */
export interface HostAgentEvidence {
  /** Per network, each host's last heartbeat on it. */
  readonly networks: ReadonlyMap<string, ReadonlyMap<string, Date>>;
  /** Each host's last report of its watched processes, and when it came. */
  readonly processes: ReadonlyMap<
    string,
    { readonly at: Date; readonly processes: Readonly<Record<string, 'running' | 'stopped'>> }
  >;
}

/** Each host's last heartbeat on any network, in milliseconds since the epoch. */
export function lastHeartbeatPerHost(evidence: HostAgentEvidence): Map<string, number> {
  const latest = new Map<string, number>();
  for (const times of evidence.networks.values())
    for (const [host, at] of times) latest.set(host, Math.max(latest.get(host) ?? 0, at.getTime()));
  return latest;
}

/** What the node monitor makes of one host's agent while the agent is heard. */
export interface HostAgentFinding {
  readonly host: string;
  /** The networks the agent is heard on (a heartbeat within HEARTBEAT_DOWN_AFTER). */
  readonly heardOn: ReadonlyArray<string>;
  /** The networks it was heard on before and is silent on now, while it is heard on another. */
  readonly silentOn: ReadonlyArray<string>;
  /** The watched processes the agent's latest report, itself recent, says are stopped. */
  readonly stoppedProcesses: ReadonlyArray<string>;
}

/**
 * The findings about every host whose agent is heard on at least one network within
 * `downAfterSeconds` of `now` (docs/host-agent.md#what-the-node-monitor-makes-of-it): the networks it
 * went silent on (a network fault on that host's side: a cable, a switch port, a bond leg; not a
 * failed host, which is silent on every network), and the processes it reports stopped (from a report
 * no older than `downAfterSeconds`). A host heard on no network is not judged here: silence on every
 * network is a failure signal, and failures go through the admission gates. Sorted by host.
 */
export function hostAgentFindings(
  evidence: HostAgentEvidence,
  now: Date,
  downAfterSeconds: number,
): HostAgentFinding[] {
  const recent = (at: Date) => now.getTime() - at.getTime() <= downAfterSeconds * 1000;
  const hosts = new Set<string>();
  for (const times of evidence.networks.values()) for (const host of times.keys()) hosts.add(host);
  const findings: HostAgentFinding[] = [];
  for (const host of [...hosts].sort()) {
    const heardOn: string[] = [];
    const silentOn: string[] = [];
    for (const [network, times] of [...evidence.networks].sort(([a], [b]) => a.localeCompare(b))) {
      const at = times.get(host);
      if (at === undefined) continue;
      (recent(at) ? heardOn : silentOn).push(network);
    }
    if (heardOn.length === 0) continue;
    const report = evidence.processes.get(host);
    const stoppedProcesses =
      report && recent(report.at)
        ? Object.entries(report.processes)
            .filter(([, state]) => state === 'stopped')
            .map(([name]) => name)
            .sort()
        : [];
    findings.push({ host, heardOn, silentOn, stoppedProcesses });
  }
  return findings;
}
