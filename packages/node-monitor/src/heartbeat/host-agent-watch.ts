import { type EventData, type EventSink, transitionEventId } from '@lifeguard/contracts';
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
  /** Where the transitions go (`host.network.silent`/`heard`, `host.process.stopped`/`running`). */
  readonly events: EventSink;
  readonly now?: () => Date;
}

/**
 * The leading node monitor's view of the host agents, reviewed every second: for each host its agent
 * is heard from, the networks it went silent on and the watched processes it reports stopped
 * (hostAgentFindings). Each is a gauge (`lifeguard_host_agent_network_silent{host,network}`,
 * `lifeguard_host_agent_process_stopped{host,process}`, alerts LifeguardHostNetworkSilent and
 * LifeguardComputeProcessStopped), and an event and a log line when it starts and when it ends
 * (`host.network.silent` / `host.network.heard`, `host.process.stopped` / `host.process.running`); a
 * start whose event could not be published is published at a later review. It fences nothing and
 * changes nothing in Nova: a host silent on one network, or whose nova-compute stopped, still runs its
 * guests.
 */
export class HostAgentWatch {
  private readonly networkSilent: Gauge<'host' | 'network'>;
  private readonly processStopped: Gauge<'host' | 'process'>;
  /** `host network` pairs announced silent, with the last heartbeat heard on that network. */
  private silent = new Map<string, Date>();
  /** `host process` pairs announced stopped. */
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

  /** Reads the reports, sets the gauges, announces what started and ended. @returns the findings */
  async review(): Promise<HostAgentFinding[]> {
    const now = this.options.now?.() ?? new Date();
    const snapshot = await this.options.reports.snapshot();
    const findings = hostAgentFindings(snapshot, now, this.options.downAfterSeconds);
    const silent = new Map<string, Date>();
    const stopped = new Set<string>();
    this.networkSilent.reset();
    this.processStopped.reset();
    for (const { host, silentOn, heardOn, stoppedProcesses } of findings) {
      for (const network of silentOn) {
        this.networkSilent.set({ host, network }, 1);
        const lastHeardAt = snapshot.networks.get(network)!.get(host)!;
        if (
          this.silent.has(`${host} ${network}`) ||
          (await this.announceSilence(host, network, heardOn, lastHeardAt))
        ) {
          silent.set(`${host} ${network}`, lastHeardAt);
        }
      }
      for (const process of stoppedProcesses) {
        this.processStopped.set({ host, process }, 1);
        const reportedAt = snapshot.processes.get(host)!.at;
        if (
          this.stopped.has(`${host} ${process}`) ||
          (await this.announceStopped(host, process, reportedAt))
        ) {
          stopped.add(`${host} ${process}`);
        }
      }
    }
    for (const [pair, lastHeardAt] of this.silent) {
      if (silent.has(pair)) continue;
      const [host, network] = pair.split(' ') as [string, string];
      const id = transitionEventId('host.network.heard', host, network, lastHeardAt.toISOString());
      if (
        !(await this.announce(
          `network ${network} of ${host} heard again`,
          'host.network.heard',
          { host, network },
          id,
        ))
      )
        silent.set(pair, lastHeardAt);
    }
    for (const pair of this.stopped) {
      if (stopped.has(pair)) continue;
      const [host, process] = pair.split(' ') as [string, string];
      // Only the agent's own report that the process runs is news of it running; an agent gone silent
      // (or a process no longer watched) says nothing either way.
      if (snapshot.processes.get(host)?.processes[process] !== 'running') {
        this.options.logger.info(
          { host, process },
          `${process} on ${host}: no longer reported (its host agent is not heard, or no longer watches it); not known to run`,
        );
        continue;
      }
      if (
        !(await this.announce(`${process} on ${host} reported running again`, 'host.process.running', {
          host,
          process,
        }))
      )
        stopped.add(pair);
    }
    this.silent = silent;
    this.stopped = stopped;
    if (++this.reviews % REVIEWS_PER_PRUNE === 0) await this.options.reports.prune(FORGET_AFTER_SECONDS, now);
    return findings;
  }

  private announceSilence(
    host: string,
    network: string,
    heardOn: ReadonlyArray<string>,
    lastHeardAt: Date,
  ): Promise<boolean> {
    // The same id from any leader: the silence is named by the last heartbeat heard on the network.
    const id = transitionEventId('host.network.silent', host, network, lastHeardAt.toISOString());
    return this.announce(
      `host agent of ${host} silent on network ${network} (heard on ${heardOn.join(', ')}): not a host failure`,
      'host.network.silent',
      { host, network, heardOn: [...heardOn], lastHeardAt: lastHeardAt.toISOString() },
      id,
      'warn',
    );
  }

  private announceStopped(host: string, process: string, reportedAt: Date): Promise<boolean> {
    return this.announce(
      `${process} reported stopped on ${host}, whose agent is heard`,
      'host.process.stopped',
      { host, process, reportedAt: reportedAt.toISOString() },
      undefined,
      'warn',
    );
  }

  /** Logs `message` and publishes the event. @returns false when the event could not be published */
  private async announce<
    Type extends
      | 'host.network.silent'
      | 'host.network.heard'
      | 'host.process.stopped'
      | 'host.process.running',
  >(
    message: string,
    type: Type,
    data: EventData<Type>,
    id?: string,
    level: 'info' | 'warn' = 'info',
  ): Promise<boolean> {
    try {
      await this.options.events.publish(type, data, id ? { id } : {});
    } catch (error) {
      const fields: Record<string, unknown> = { err: error, event: type, ...data };
      this.options.logger.warn(fields, `${type} not published; trying again at the next review`);
      return false;
    }
    const fields: Record<string, unknown> = { ...data };
    this.options.logger[level](fields, message);
    return true;
  }

  /** Clears the gauges and forgets the last review (a replica that stops leading). */
  clear(): void {
    this.networkSilent.reset();
    this.processStopped.reset();
    this.silent.clear();
    this.stopped.clear();
  }
}
