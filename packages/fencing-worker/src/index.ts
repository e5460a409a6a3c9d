export { bmcAddressProblem } from './configuration/bmc-address.ts';
export {
  describeMethod,
  type FenceAgentMethod,
  type FenceMethod,
  type HostFencing,
  type IpmiMethod,
  type NoopMethod,
  type RedfishMethod,
  type TlsSettings,
} from './configuration/fence-methods.ts';
export {
  type FencingConfigOptions,
  FencingConfiguration,
  loadFencingConfig,
  parseFencingConfig,
} from './configuration/fencing-config.ts';
export { normaliseIdentity, sameIdentity } from './configuration/method-schemas.ts';
export { createDriver, type DriverFactoryContext } from './drivers/create-driver.ts';
export { FenceAgentDriver, type FenceAgentHooks } from './drivers/fence-agent-driver.ts';
export {
  DEFAULT_DRIVER_TIMING,
  type DriverContext,
  type DriverTiming,
  type FenceDriver,
  type PowerOffOutcome,
  type PowerState,
} from './drivers/fence-driver.ts';
export { IpmiDriver, Ipmitool } from './drivers/ipmi-driver.ts';
export { NoopDriver } from './drivers/noop-driver.ts';
export { RedfishClient } from './drivers/redfish-client.ts';
export { RedfishDriver } from './drivers/redfish-driver.ts';
export {
  FenceCredentialsError,
  FenceIdentityMismatchError,
  FencingConfigurationError,
  FencingError,
  type FencingErrorKind,
  FencingFailedError,
} from './errors.ts';
export { expectedIdentity, HostFencer, type PowerOffResult } from './fencing/host-fencer.ts';
export { redactSecrets } from './process/redact-secrets.ts';
export {
  FailedFenceReconciler,
  type FailedFenceReconcilerOptions,
} from './worker/failed-fence-reconciler.ts';
export { FenceJob, type FenceJobDependencies } from './worker/fence-job.ts';
export { createFencingMetrics, type FencingMetrics, mergePrometheusText } from './worker/fencing-metrics.ts';
export { FencingWorker, type FencingWorkerOptions } from './worker/fencing-worker.ts';
export {
  GuardedPowerOff,
  type GuardedPowerOffDependencies,
  type GuardedPowerOffOutcome,
  POWER_OFF_CLAIM_LOCK_DURATIONS,
} from './worker/guarded-power-off.ts';
export {
  declareHostDownQueue,
  FENCE_JOB_RETENTION_SECONDS,
  HostDownIntake,
  type HostDownIntakeDependencies,
} from './worker/host-down-intake.ts';
export {
  BACKOFF_BY_ERROR_KIND,
  backoffByErrorKind,
  classifyJobError,
  type JobErrorClass,
  type JobErrorKind,
} from './worker/job-errors.ts';
export { waitForKdump } from './worker/kdump-wait.ts';
export { type MarkingOutcome, markServiceFenced } from './worker/nova-marking.ts';
export {
  POWER_OFF_CLAIM_GATE,
  type PowerOffClaimVerdict,
  powerOffClaimVerdict,
} from './worker/power-off-claim.ts';
export { PowerOnJob, type PowerOnJobDependencies, type PowerOnJobResult } from './worker/power-on-job.ts';
export {
  DEFAULT_FENCING_CONFIG_PATH,
  type FencingWorkerConfig,
  type FencingWorkerSettings,
  fencingOptions,
  fencingWorkerSchema,
  loadFencingWorkerConfig,
} from './worker/worker-config.ts';
