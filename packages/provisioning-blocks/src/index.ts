export {
  loadProvisioningConfiguration,
  notifiesNova,
  osloQueueOptions,
  PROVISIONING_ROLES,
  type ProvisioningConfiguration,
  type ProvisioningRole,
  provisioningConfigurationSchema,
  rpcAmqpUrl,
} from './configuration.ts';
export {
  ConcurrentUpdateError,
  NovaNotificationError,
  RpcMethodError,
  UnregisteredObjectTypeError,
} from './errors.ts';
export { createProvisioningMetrics, type ProvisioningMetrics } from './metrics.ts';
export {
  AgentCallbacks,
  type AgentCallbacksOptions,
  type DeviceDownResult,
  type DeviceUpResult,
} from './ml2/agent-callbacks.ts';
export {
  addressesChanged,
  bindingRequestChanged,
  type DhcpBlockDecision,
  dhcpBlockDecision,
  isNoBlockDeviceOwner,
  MECHANISM_DRIVERS,
  type MechanismDriver,
  needsL2Block,
} from './ml2/ml2-rules.ts';
export { type PortChange, PortProvisioning, type PortProvisioningOptions } from './ml2/port-provisioning.ts';
export { CommandHandler, type CommandHandlerOptions } from './native/command-handler.ts';
export { NativeAgentHandler } from './native/native-agent-handler.ts';
export { OrderedExecutor } from './native/ordered-executor.ts';
export { PROVISIONING_VARIABLES } from './own-variables.ts';
export { neutronRpcMethods, neutronRpcTopics } from './rpc/neutron-endpoints.ts';
export {
  methodFailure,
  type RpcEndpoint,
  type RpcMethod,
  type RpcTopic,
  selectMethod,
  versionIsCompatible,
} from './rpc/oslo-dispatcher.ts';
export {
  DEFAULT_OSLO_QUEUE_OPTIONS,
  type OsloDeclarations,
  type OsloQueueOptions,
  osloDeclarations,
} from './rpc/oslo-queue-arguments.ts';
export { OsloReplySender, type OsloReplySenderOptions } from './rpc/oslo-reply-sender.ts';
export { OsloRpcServer, type OsloRpcServerOptions } from './rpc/oslo-rpc-server.ts';
export { type Provisioning, type StartProvisioningOptions, startProvisioning } from './service.ts';
export {
  declareNovaPortNotificationsQueue,
  declareProvisioningCompleteQueue,
} from './status/event-queues.ts';
export { isComputePort, novaEventFor } from './status/nova-events.ts';
export {
  type ExternalEventsApi,
  type NovaEventOutcome,
  NovaNotifier,
  type NovaNotifierOptions,
} from './status/nova-notifier.ts';
export {
  MAX_PROVISIONING_TRIES,
  PortStatusSubscriber,
  type PortStatusSubscriberOptions,
} from './status/port-status-subscriber.ts';
export { type AgentView, decodeAgent } from './store/agent-record.ts';
export { AgentRegistry, type AgentRegistryOptions, parseAgentTime } from './store/agent-registry.ts';
export {
  type AddOutcome,
  BlockStore,
  type CompleteOptions,
  type CompletionOutcome,
  type CompletionResult,
} from './store/block-store.ts';
export {
  type OutboxEvent,
  type OutboxReading,
  outboxFieldsOf,
  readOutboxEntry,
} from './store/outbox-entry.ts';
export {
  appendToOutbox,
  OUTBOX_GROUP,
  type OutboxEntry,
  OutboxRelay,
  type OutboxRelayOptions,
  publishOutboxEntryTo,
} from './store/outbox-relay.ts';
export { decodePort, encodePortFields, isUuidLike, type StoredPort } from './store/port-record.ts';
export {
  type BlockOperation,
  PortStore,
  type PortWriteResult,
  type ProvisionedOutcome,
} from './store/port-store.ts';
export { ProvisioningKeys } from './store/provisioning-keys.ts';
export {
  type OutboxDepth,
  ProvisioningReader,
  type ProvisioningReaderOptions,
} from './store/provisioning-reader.ts';
export { type CreateOutcome, RecordStore } from './store/record-store.ts';
