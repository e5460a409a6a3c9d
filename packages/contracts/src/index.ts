export { type ContractIssue, ContractViolationError } from './errors.ts';
export { createEvent, transitionEventId } from './events/create-event.ts';
export type { EventSink } from './events/event-sink.ts';
export {
  AdmissionBlockedEvent,
  AdmissionGate,
  EVENT_SCHEMA_VERSION,
  EvacuationMode,
  type EventData,
  type EventOf,
  EventSource,
  eventIncidentId,
  eventRoutingKey,
  FenceProof,
  HostCapacityInsufficientEvent,
  HostDownEvent,
  HostDownEvidence,
  HostEvacuatedEvent,
  HostEvacuationFailedEvent,
  HostEvacuationStartedEvent,
  HostFencedEvent,
  HostFencingFailedEvent,
  HostPoweredOnEvent,
  HostPowerOnFailedEvent,
  HostRecoveredEvent,
  HostRecoveryRequestedEvent,
  HostReenabledEvent,
  HostReenableWaitingEvent,
  HostUnavailability,
  InstanceEvacuatedEvent,
  InstanceEvacuationFailedEvent,
  InstanceEvacuationSkippedEvent,
  LIFEGUARD_EVENT_TYPES,
  LifeguardEvent,
  type LifeguardEventType,
  OperatorActionEvent,
  OperatorActionName,
  RedisMemoryLostEvent,
  ThresholdExceededEvent,
} from './events/events.ts';
export {
  HostAgentSilentEvent,
  HostComputeServiceDisabledEvent,
  HostComputeServiceEnabledEvent,
  HostNetworkHeardEvent,
  HostNetworkSilentEvent,
  HostProcessRunningEvent,
  HostProcessStoppedEvent,
} from './events/host-agent-events.ts';
export { HostName, IncidentId, Timestamp } from './events/identifiers.ts';
export {
  InstanceRestartCompletedEvent,
  InstanceRestartFailedEvent,
  InstanceRestartGivenUpEvent,
  InstanceRestartStartedEvent,
} from './events/instance-restart-events.ts';
export {
  PortStatusChangedEvent,
  PortVifPluggedEvent,
  ProvisioningCompleteEvent,
} from './events/provisioning-event-schemas.ts';
export {
  type EventEnvelope,
  portStatusChangedEvent,
  portVifPluggedEvent,
  provisioningCompleteEvent,
} from './events/provisioning-events.ts';
export {
  encodeHeartbeat,
  formatHostAgentReport,
  HEARTBEAT_DEFAULT_PORT,
  HEARTBEAT_HMAC_BYTES,
  HEARTBEAT_MAGIC,
  HEARTBEAT_MINIMUM_BYTES,
  type HostAgentReport,
  type ProcessState,
  parseHostAgentReport,
  REPORT_NAME,
} from './heartbeat/hbv2-packet.ts';
export { type HeartbeatKeyProblem, loadHeartbeatKeys } from './heartbeat/heartbeat-keys.ts';
export { listenProblem } from './http/listen-problem.ts';
export {
  INSTANCE_RESTART_JOB_OPTIONS,
  InstanceFailure,
  InstanceFailureSource,
  InstanceRestartJob,
  InstanceRestartOutcome,
} from './jobs/instance-restart.ts';
export {
  evacuateHostJobId,
  evacuateInstanceJobId,
  fencingJobId,
  instanceRestartJobId,
  masakariNotificationJobId,
  powerOnJobId,
  reenableJobId,
} from './jobs/job-ids.ts';
export {
  EvacuateHostJobData,
  EvacuateHostJobResult,
  EvacuateInstanceJobData,
  EvacuateInstanceJobResult,
  FencingJobData,
  FencingJobResult,
  PowerOnJobData,
  ReenableJobData,
  TargetHostUse,
} from './jobs/jobs.ts';
export { standardOutput } from './logging/standard-output.ts';
export { nameBasedUuid } from './name-based-uuid.ts';
export {
  AGENT_RPC_METHODS,
  AgentDevice,
  AgentReportTime,
  type AgentRpcEndpoint,
  type AgentRpcMethod,
  AgentState,
  DhcpReadyOnPortsArgs,
  HasAliveNeutronServerArgs,
  PLUGIN_TOPIC_ENDPOINTS,
  REPORTS_TOPIC_ENDPOINTS,
  ReportStateArgs,
  ReportStateResult,
  UpdateDeviceDownArgs,
  UpdateDeviceDownResult,
  UpdateDeviceListArgs,
  UpdateDeviceListResult,
  UpdateDeviceUpArgs,
} from './neutron/agent-rpc.ts';
export {
  AGENT_TYPE_DHCP,
  AGENT_TYPE_LINUX_BRIDGE,
  AGENT_TYPE_MACVTAP,
  AGENT_TYPE_OPEN_VSWITCH,
  AGENT_TYPE_SRIOV,
  COMPUTE_DEVICE_OWNER_PREFIX,
  DEFAULT_AGENT_DOWN_TIME_SECONDS,
  NO_PROVISIONING_BLOCK_DEVICE_OWNERS,
  PORT_STATUSES,
  type PortStatus,
  PROVISIONING_ENTITY_DHCP,
  PROVISIONING_ENTITY_L2,
  VNIC_TYPES,
} from './neutron/constants.ts';
export {
  Agent,
  FixedIp,
  NativeAgentMessage,
  Network,
  Port,
  ProvisioningCommand,
  type ProvisioningCommandName,
  Subnet,
} from './neutron/records.ts';
export {
  decodeOsloBody,
  encodeOsloBody,
  OSLO_ENVELOPE_VERSION,
  OSLO_MESSAGE_PROPERTIES,
  OsloEnvelope,
  type OsloReplyAddress,
  peekOsloReplyAddress,
} from './oslo/envelope.ts';
export {
  isOsloCall,
  noSuchMethodFailure,
  OSLO_DISPATCHER_MODULE,
  OSLO_DRIVER_COMMON_MODULE,
  OsloFailure,
  OsloReply,
  OsloRequest,
  OsloVersion,
  osloRequestContext,
  unsupportedEnvelopeFailure,
  unsupportedVersionFailure,
} from './oslo/rpc.ts';
export { OSLO_TOPOLOGY, osloFanoutExchange, osloServerQueue } from './oslo/topology.ts';
export { parseWith } from './parse.ts';
export {
  BACKOFF_TYPES,
  DEAD_LETTER_EXCHANGE,
  DEAD_LETTER_HEADERS,
  DEAD_LETTER_QUEUE,
  EVENTS_EXCHANGE,
  JOB_NAMES,
  JOB_QUEUES,
  NATIVE_AGENTS_EXCHANGE,
  NEUTRON_RPC,
  PROVISIONING_COMMANDS_EXCHANGE,
  QUEUES,
  REPLAY_HEADERS,
} from './topology.ts';
export { WORKER_KINDS, WorkerHeartbeat, type WorkerKind } from './workers/worker-heartbeat.ts';
