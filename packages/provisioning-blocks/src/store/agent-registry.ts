import { randomUUID } from 'node:crypto';
import { AGENT_TYPE_DHCP, type AgentState, type ReportStateResult } from '@lifeguard/contracts';
import type { RedisClient } from '@lifeguard/runtime';
import { defineRedisScripts, runScript } from '@lifeguard/runtime';
import type { Logger } from 'pino';
import { reportStateScript } from '../lua/agent-scripts.ts';
import type { ProvisioningMetrics } from '../metrics.ts';
import type { AgentView } from './agent-record.ts';
import type { ProvisioningKeys } from './provisioning-keys.ts';
import { ProvisioningReader } from './provisioning-reader.ts';
import type { RecordStore } from './record-store.ts';

export interface AgentRegistryOptions {
  redis: RedisClient;
  keys: ProvisioningKeys;
  records: RecordStore;
  logger: Logger;
  metrics?: ProvisioningMetrics | null;
  /** Neutron's agent_down_time in seconds (default 75): alive iff the last heartbeat is not older. */
  agentDownTimeSeconds: number;
  /** admin_state_up of newly registered agents (Neutron's enable_new_agents, default true). */
  enableNewAgents: boolean;
  /** When this service started, in milliseconds since the epoch: older reports are stale. */
  startedAtMilliseconds: number;
  /** The server clock in milliseconds (tests replace it). */
  now?: () => number;
}

/**
 * Parses an agent's report time (`%Y-%m-%dT%H:%M:%S.%f`, UTC without a zone) to milliseconds.
 * @returns NaN when it does not parse
 */
export function parseAgentTime(time: string): number {
  const match = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,6}))?$/.exec(time);
  if (!match) return Number.NaN;
  const fraction = (match[2] ?? '').padEnd(3, '0').slice(0, 3);
  return Date.parse(`${match[1]}.${fraction}Z`);
}

/**
 * Agent records kept from heartbeats (`report_state`), keyed by `(agent_type, host)` as Neutron
 * keys them, with Neutron's answers (docs/neutron-provisioning-rules.md#report_state): "new" for a first report, "revived" when the
 * agent's previous heartbeat is older than agent_down_time, else "alive"; reports whose agent time
 * is older than this service's start are stale: skipped, answer null.
 */
export class AgentRegistry {
  private readonly now: () => number;
  private readonly reader: ProvisioningReader;

  constructor(private readonly options: AgentRegistryOptions) {
    this.now = options.now ?? Date.now;
    defineRedisScripts(options.redis, [reportStateScript]);
    this.reader = new ProvisioningReader(options.redis, options.keys, {
      agentDownTimeSeconds: options.agentDownTimeSeconds,
      now: this.now,
    });
  }

  /**
   * Records one heartbeat.
   * @param agentTime the agent's clock in milliseconds (from the RPC `time`), or null when the
   *   message carried none (native messages): then the report is never stale
   * @returns "new", "alive", "revived", or null for a stale report
   */
  async reportState(state: AgentState, agentTime: number | null): Promise<ReportStateResult> {
    const { redis, keys, logger, metrics, agentDownTimeSeconds } = this.options;
    const now = this.now();
    if (agentTime !== null) {
      if (state.start_flag && Math.abs(now - agentTime) > agentDownTimeSeconds * 1000) {
        logger.error(
          {
            host: state.host,
            agentType: state.agent_type,
            agentTime: new Date(agentTime).toISOString(),
            serverTime: new Date(now).toISOString(),
          },
          'the agent clock differs from the server clock by more than agent_down_time; check NTP on both',
        );
      }
      if (agentTime < this.options.startedAtMilliseconds) {
        logger.debug(
          { host: state.host, agentType: state.agent_type, agentTime: new Date(agentTime).toISOString() },
          'stale agent report older than this service; skipped',
        );
        metrics?.agentReports.inc({ status: 'stale' });
        return null;
      }
    }
    const stored = {
      agent_type: state.agent_type,
      binary: state.binary,
      host: state.host,
      topic: state.topic,
      configurations: state.configurations ?? {},
    };
    const status = String(
      await runScript(
        redis,
        reportStateScript,
        [keys.agent(state.agent_type, state.host), keys.agentIndex],
        [
          new Date(now).toISOString(),
          now,
          agentDownTimeSeconds * 1000,
          randomUUID(),
          String(this.options.enableNewAgents),
          state.start_flag ? '1' : '0',
          JSON.stringify(stored),
          state.resource_versions && Object.keys(state.resource_versions).length > 0
            ? JSON.stringify(state.resource_versions)
            : '',
          'availability_zone' in state ? JSON.stringify(state.availability_zone ?? null) : '',
          `${state.agent_type}\n${state.host}`,
        ],
      ),
    ) as 'new' | 'alive' | 'revived';
    metrics?.agentReports.inc({ status });
    if (status !== 'alive')
      logger.info({ host: state.host, agentType: state.agent_type, status }, `agent ${status}`);
    return status;
  }

  /** The agent of that type on that host, or null. */
  get(agentType: string, host: string): Promise<AgentView | null> {
    return this.reader.agent(agentType, host);
  }

  /** Every registered agent, sorted by host then type. */
  list(): Promise<AgentView[]> {
    return this.reader.agents();
  }

  /** The agent types registered on a host among `agentTypes` (liveness is not considered, as ML2). */
  async typesOnHost(host: string, agentTypes: ReadonlyArray<string>): Promise<Set<string>> {
    if (agentTypes.length === 0) return new Set();
    const pipeline = this.options.redis.pipeline();
    for (const agentType of agentTypes) pipeline.exists(this.options.keys.agent(agentType, host));
    const results = (await pipeline.exec()) ?? [];
    return new Set(agentTypes.filter((_, index) => Number(results[index]?.[1] ?? 0) === 1));
  }

  /**
   * Deletes an agent; a DHCP agent also loses its network bindings (as Neutron's cascade).
   * @returns false when there was no such agent
   */
  async delete(agentType: string, host: string): Promise<boolean> {
    const { redis, keys, records } = this.options;
    const results = await redis
      .multi()
      .del(keys.agent(agentType, host))
      .srem(keys.agentIndex, `${agentType}\n${host}`)
      .exec();
    if (agentType === AGENT_TYPE_DHCP) await records.removeDhcpAgent(host);
    return Number(results?.[0]?.[1] ?? 0) === 1;
  }
}
