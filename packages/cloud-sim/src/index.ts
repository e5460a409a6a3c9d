export { CloudSim, type CloudSimOptions, startCloudSim } from './cloud-sim.ts';
export {
  type CloudSimConfigDefaults,
  cloudSimConfigKeys,
  listenPort,
} from './config/cloud-sim-config.ts';
export type { InjectedResponse } from './http/fault-injector.ts';
export { MAX_MICROVERSION, MIN_MICROVERSION } from './http/microversion.ts';
export {
  type RecordedRequest,
  type RequestObserver,
  type RequestPhase,
  RequestRecord,
} from './http/request-record.ts';
export type { BmcAccess, HostState, SimControl, SimUrls } from './http/sim-control.ts';
export {
  type AddServerOptions,
  CloudModel,
  type CloudModelSettings,
  DEFAULT_MODEL_SETTINGS,
} from './model/cloud-model.ts';
export type {
  EvacuationFailureMode,
  EvacuationSettings,
  EvacuationWorld,
} from './model/evacuation-engine.ts';
export { IdentityStore } from './model/identity-store.ts';
export { UnknownFlavorError, UnknownHostError } from './model/model-errors.ts';
export type {
  MigrationStatus,
  ReceivedExternalEvent,
  SimAggregate,
  SimBmc,
  SimFlavor,
  SimHost,
  SimImage,
  SimMigration,
  SimServer,
} from './model/records.ts';
