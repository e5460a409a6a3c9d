export { describeStack, masakariApiEndpoint } from './banner.ts';
export {
  DEMO_AGGREGATE_MAX_FAILURES,
  DEMO_EVACUABLE_AGGREGATE,
  DEMO_EVACUABLE_TAG,
  DEMO_UNPROTECTED_AGGREGATE,
  type DemoCloudLayout,
  type DemoCloudOptions,
  demoCloudLayout,
  demoHostName,
  seedDemoCloud,
  startDemoCloud,
} from './demo-cloud.ts';
export {
  BrokerNotReachableError,
  BuildFailedError,
  ForeignStateError,
  StackConfigurationError,
  StateInUseError,
  VhostInUseError,
  WorkerStartError,
  workerStartExitStatus,
} from './errors.ts';
export { LOG_FORMATS, type LogFormat, type WorkerLogLine } from './log-output.ts';
export {
  checkBrokers,
  checkVhostUnused,
  resetSimulatedState,
  SIMULATED_STATE_MARKER,
  WORKER_INTAKE_QUEUES,
} from './preflight.ts';
export { Stack, startStack } from './stack.ts';
export {
  DEMO_INSTANCE_HA_CONFIG,
  DEMO_WORKER_ENVIRONMENT,
  SIMULATED_CLOUD_NAME,
  type StackFiles,
} from './stack-files.ts';
export {
  type OpenStackCloudOptions,
  PACKAGE_REPOSITORY_ROOT,
  type ResolvedStackOptions,
  type SimulatedCloudOptions,
  type StackOptions,
} from './stack-options.ts';
export {
  DEFAULT_HTTP_PORTS,
  WORKER_KINDS,
  type WorkerDefinition,
  type WorkerKind,
  workerDefinitions,
} from './worker-definitions.ts';
export { buildPackages } from './worker-launch.ts';
export { describeExit, type WorkerExit, WorkerProcess } from './worker-process.ts';
