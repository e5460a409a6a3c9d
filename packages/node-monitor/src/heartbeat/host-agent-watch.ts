import { type HostAgentFinding, hostAgentFindings } from '@lifeguard/instance-ha';
import type { Logger } from '@lifeguard/runtime';
import { Gauge, type Registry } from 'prom-client';
import type { HostAgentReports } from './host-agent-reports.ts';

/** What a host agent's report is kept for in Redis before it is forgotten (InstanceHA keeps heartbeats 600 s). */
const FORGET_AFTER_SECONDS = 600;
/** Reviews between two prunes of the reports. */
const REVIEWS_PER_PRUNE = 60;

export interface HostAgentWatchOptions {
  readonly reports: Pick<HostAgentReports, 'snapshot' | 'prune'>;
  /** HEARTBEAT_DOWN_AFTER: seconds without a heartbeat on a network before it counts as silent. */
  readonly downAfterSeconds: number;
  readonly registry: Registry;
  readonly logger: Logger;
  readonly now?: () => Date;
}

/**
 * The leading node monitor's view of the host agents, reviewed every second: for each host its agent
 * is heard from, the networks it went silent on and the watched processes it reports stopped
 * (hostAgentFindings). Each is a gauge (`lifeguard_host_agent_network_silent{host,network}`,
 * `lifeguard_host_agent_process_stopped{host,process}`, alerts LifeguardHostNetworkSilent and
 * LifeguardComputeProcessStopped) and a log line when it starts and when it ends. It fences nothing and
 * changes nothing in Nova: a host silent on one network, or whose nova-compute stopped, still runs its
 * guests.
 */
export class HostAgentWatch {
  private readonly networkSilent: Gauge<'host' | 'network'>;
  private readonly processStopped: Gauge<'host' | 'process'>;
  /** `host network` and `host process` pairs of the last review (to log what starts and ends). */
  private silent = new Set<string>();
  private stopped = new Set<string>();
  private reviews = 0;

  constructor(private readonly options: HostAgentWatchOptions) {
    const registers = [options.registry];
    this.networkSilent = new Gauge({
      name: 'lifeguard_host_agent_network_silent',
      help: "1 while a host's agent is silent on this network but heard on another (HEARTBEAT_DOWN_AFTER)",
      labelNames: ['host', 'network'],
      registers,
    });
    this.processStopped = new Gauge({
      name: 'lifeguard_host_agent_process_stopped',
      help: "1 while a live host's agent reports this watched process stopped",
      labelNames: ['host', 'process'],
      registers,
    });
  }

  /** Reads the reports, sets the gauges, logs what started and ended. @returns the findings */
  async review(): Promise<HostAgentFinding[]> {
    const now = this.options.now?.() ?? new Date();
    const findings = hostAgentFindings(
      await this.options.reports.snapshot(),
      now,
      this.options.downAfterSeconds,
    );
    const silent = new Set<string>();
    const stopped = new Set<string>();
    this.networkSilent.reset();
    this.processStopped.reset();
    for (const { host, silentOn, heardOn, stoppedProcesses } of findings) {
      for (const network of silentOn) {
        silent.add(`${host} ${network}`);
        this.networkSilent.set({ host, network }, 1);
        if (!this.silent.has(`${host} ${network}`)) {
          this.options.logger.warn(
            { host, network, heardOn },
            `host agent of ${host} silent on network ${network} (heard on ${heardOn.join(', ')}): not a host failure`,
          );
        }
      }
      for (const process of stoppedProcesses) {
        stopped.add(`${host} ${process}`);
        this.processStopped.set({ host, process }, 1);
        if (!this.stopped.has(`${host} ${process}`)) {
          this.options.logger.warn(
            { host, process },
            `${process} reported stopped on ${host}, whose agent is heard`,
          );
        }
      }
    }
    for (const pair of this.silent) if (!silent.has(pair)) this.ended('network heard again', pair);
    for (const pair of this.stopped)
      if (!stopped.has(pair)) this.ended('process no longer reported stopped', pair);
    this.silent = silent;
    this.stopped = stopped;
    if (++this.reviews % REVIEWS_PER_PRUNE === 0) await this.options.reports.prune(FORGET_AFTER_SECONDS, now);
    return findings;
  }

  /** Clears the gauges and forgets the last review (a replica that stops leading). */
  clear(): void {
    this.networkSilent.reset();
    this.processStopped.reset();
    this.silent.clear();
    this.stopped.clear();
  }

  private ended(what: string, pair: string): void {
    const [host, name] = pair.split(' ');
    this.options.logger.info({ host, name }, `${what}: ${name} on ${host}`);
  }
}
