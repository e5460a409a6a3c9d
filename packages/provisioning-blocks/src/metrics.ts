import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** The provisioning service's Prometheus metrics (`lifeguard_provisioning_*`). */
export interface ProvisioningMetrics {
  blocksAdded: Counter<'entity'>;
  blocksRemoved: Counter<'entity' | 'reason'>;
  completions: Counter<'entity' | 'outcome'>;
  statusTransitions: Counter<'from' | 'to'>;
  outboxDepth: Gauge;
  outboxLagSeconds: Gauge;
  outboxPublished: Counter<'type'>;
  outboxPublishFailures: Counter;
  outboxClaimed: Counter;
  outboxDeadLettered: Counter;
  rpcRequests: Counter<'method' | 'outcome'>;
  stuckPorts: Gauge<'reason'>;
  reconciledPorts: Counter<'outcome'>;
  commands: Counter<'command' | 'outcome'>;
  rpcDurationSeconds: Histogram<'method'>;
  duplicatesSuppressed: Counter<'source'>;
  agentReports: Counter<'status'>;
  novaEvents: Counter<'name' | 'code'>;
  novaRequests: Counter<'outcome'>;
}

/**
 * Registers the provisioning metrics in `registry`. Outbox depth and lag are gauges whose values
 * the OutboxRelay refreshes on every scrape.
 */
export function createProvisioningMetrics(registry: Registry): ProvisioningMetrics {
  const registers = [registry];
  // Created in this order, so /metrics lists them in it.
  return {
    ...blockMetrics(registers),
    ...outboxMetrics(registers),
    ...agentMetrics(registers),
    ...novaMetrics(registers),
  };
}

/** Blocks stored and removed, completions and port status changes. */
function blockMetrics(
  registers: Registry[],
): Pick<ProvisioningMetrics, 'blocksAdded' | 'blocksRemoved' | 'completions' | 'statusTransitions'> {
  return {
    blocksAdded: new Counter({
      name: 'lifeguard_provisioning_blocks_added_total',
      help: 'Provisioning blocks stored, by entity (DHCP, L2, ...)',
      labelNames: ['entity'],
      registers,
    }),
    blocksRemoved: new Counter({
      name: 'lifeguard_provisioning_blocks_removed_total',
      help: 'Provisioning blocks removed, by entity and reason (completed, cleared, deleted)',
      labelNames: ['entity', 'reason'],
      registers,
    }),
    completions: new Counter({
      name: 'lifeguard_provisioning_completions_total',
      help: 'Completions reported by entities, by outcome (emitted, blocked, missing, not_bound_to_host)',
      labelNames: ['entity', 'outcome'],
      registers,
    }),
    statusTransitions: new Counter({
      name: 'lifeguard_provisioning_port_status_transitions_total',
      help: 'Port status changes written by this service, by previous and new status',
      labelNames: ['from', 'to'],
      registers,
    }),
  };
}

/** The outbox: depth, lag, published, failed, claimed and dead-lettered entries. */
function outboxMetrics(
  registers: Registry[],
): Pick<
  ProvisioningMetrics,
  | 'outboxDepth'
  | 'outboxLagSeconds'
  | 'outboxPublished'
  | 'outboxPublishFailures'
  | 'outboxClaimed'
  | 'outboxDeadLettered'
> {
  return {
    outboxDepth: new Gauge({
      name: 'lifeguard_provisioning_outbox_depth',
      help: 'Events in the outbox stream not yet published and trimmed',
      registers,
    }),
    outboxLagSeconds: new Gauge({
      name: 'lifeguard_provisioning_outbox_lag_seconds',
      help: 'Age in seconds of the oldest event still in the outbox (0 when empty)',
      registers,
    }),
    outboxPublished: new Counter({
      name: 'lifeguard_provisioning_outbox_published_total',
      help: 'Events published from the outbox with a broker confirm, by event type',
      labelNames: ['type'],
      registers,
    }),
    outboxPublishFailures: new Counter({
      name: 'lifeguard_provisioning_outbox_publish_failures_total',
      help: 'Outbox publishes that failed and will be retried',
      registers,
    }),
    outboxClaimed: new Counter({
      name: 'lifeguard_provisioning_outbox_claimed_total',
      help: 'Outbox entries claimed from a relay that stopped without acknowledging them',
      registers,
    }),
    outboxDeadLettered: new Counter({
      name: 'lifeguard_provisioning_outbox_dead_lettered_total',
      help: 'Outbox entries that gave no valid event, moved to the dead outbox with their reason',
      registers,
    }),
  };
}

/** Stuck and reconciled ports, agent requests and commands, duplicates and agent reports. */
function agentMetrics(
  registers: Registry[],
): Pick<
  ProvisioningMetrics,
  | 'stuckPorts'
  | 'reconciledPorts'
  | 'rpcRequests'
  | 'commands'
  | 'rpcDurationSeconds'
  | 'duplicatesSuppressed'
  | 'agentReports'
> {
  return {
    stuckPorts: new Gauge({
      name: 'lifeguard_provisioning_stuck_ports',
      help: 'Ports found stuck by the last reconciler round, by reason (unbound, binding_failed, admin_down, l2_agent_dead, dhcp_agent_dead)',
      labelNames: ['reason'],
      registers,
    }),
    reconciledPorts: new Counter({
      name: 'lifeguard_provisioning_reconciled_ports_total',
      help: 'Ports awaiting ACTIVE handled by the reconciler, by outcome (activated: stuck and set ACTIVE; cleared: ACTIVE already, gone or blocked again)',
      labelNames: ['outcome'],
      registers,
    }),
    rpcRequests: new Counter({
      name: 'lifeguard_provisioning_rpc_requests_total',
      help: 'Agent requests (oslo RPC and native) by method and outcome (ok, failure, rejected, duplicate, error)',
      labelNames: ['method', 'outcome'],
      registers,
    }),
    commands: new Counter({
      name: 'lifeguard_provisioning_commands_total',
      help: 'Native record commands by command and outcome (applied, unchanged, rejected)',
      labelNames: ['command', 'outcome'],
      registers,
    }),
    rpcDurationSeconds: new Histogram({
      name: 'lifeguard_provisioning_rpc_duration_seconds',
      help: 'Time from receiving an agent request to its committed effect, in seconds',
      labelNames: ['method'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
      registers,
    }),
    duplicatesSuppressed: new Counter({
      name: 'lifeguard_provisioning_duplicates_suppressed_total',
      help: 'Redelivered requests (by oslo _unique_id) and events (by event id) handled only once',
      labelNames: ['source'],
      registers,
    }),
    agentReports: new Counter({
      name: 'lifeguard_provisioning_agent_reports_total',
      help: 'Agent heartbeats (report_state) by the status returned (new, alive, revived, stale)',
      labelNames: ['status'],
      registers,
    }),
  };
}

/** Nova external events and the requests that sent them. */
function novaMetrics(registers: Registry[]): Pick<ProvisioningMetrics, 'novaEvents' | 'novaRequests'> {
  return {
    novaEvents: new Counter({
      name: 'lifeguard_provisioning_nova_events_total',
      help: 'Nova external events sent, by name and the per-event code Nova returned',
      labelNames: ['name', 'code'],
      registers,
    }),
    novaRequests: new Counter({
      name: 'lifeguard_provisioning_nova_requests_total',
      help: 'POST /os-server-external-events requests by outcome (accepted, partial, rejected, retried, failed)',
      labelNames: ['outcome'],
      registers,
    }),
  };
}
