export {
  ConcurrentUpdateError,
  NovaNotificationError,
  RpcMethodError,
  UnregisteredObjectTypeError,
} from './errors.ts';
export { createProvisioningMetrics, type ProvisioningMetrics } from './metrics.ts';
export {
  type AddOutcome,
  BlockStore,
  type CompleteOptions,
  type CompletionOutcome,
  type CompletionResult,
} from './store/block-store.ts';
export { LuaScript } from './store/lua-script.ts';
export {
  OUTBOX_GROUP,
  type OutboxEntry,
  OutboxRelay,
  type OutboxRelayOptions,
  publishOutboxEntryTo,
} from './store/outbox-relay.ts';
export {
  type BlockOperation,
  decodePort,
  encodePortFields,
  isUuidLike,
  PortStore,
  type PortWriteResult,
  type ProvisionedOutcome,
  type StoredPort,
} from './store/port-store.ts';
export { ProvisioningKeys } from './store/provisioning-keys.ts';
