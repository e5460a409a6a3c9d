export { CapturedLines } from './capture-logger.ts';
export { FAST_CLOUD_TIMINGS, FAST_INSTANCE_HA } from './fast-cloud.ts';
export { hostDownEvidence } from './host-down-evidence.ts';
export { type IpmiSimulator, type IpmiSimulatorOptions, startIpmiSimulator } from './ipmi-simulator.ts';
export { repeatedJsonKeys } from './json-keys.ts';
export {
  type LifeguardProcessRun,
  lifeguardEntryPoint,
  lifeguardProcessRun,
  withoutNodeOptions,
} from './lifeguard-processes.ts';
export {
  createNetworkNamespaces,
  type NetworkNamespaces,
  networkNamespacesUnavailable,
  type SimulatedMachine,
} from './network-namespaces.ts';
export {
  type PrivateRabbitmqNode,
  privateRabbitmqEnvironment,
  startPrivateRabbitmq,
  stopProcessGroup,
} from './private-rabbitmq.ts';
export {
  brokerlessEnvironment,
  type ProgramStart,
  startProgramUntil,
  type UnknownVariableWarning,
  unknownVariableWarning,
  unusedCloudEnvironment,
} from './program-start.ts';
export {
  closeConnectionByName,
  createTestVhost,
  RABBITMQ,
  type TestVhost,
  takeDeadLetterReasons,
} from './rabbitmq.ts';
export { type ClusterNode, type RabbitmqCluster, startRabbitmqCluster } from './rabbitmq-cluster.ts';
export { REAL_NOVA_API_VARIABLES, requireRealNovaVariables } from './real-nova-environment.ts';
export { deleteKeysWithPrefix, issueFencingToken, REDIS_URL, randomKeyPrefix, testRedis } from './redis.ts';
export {
  type ClusterNodeProcess,
  type PrivateRedisCluster,
  type PrivateRedisClusterOptions,
  startPrivateRedisCluster,
} from './redis-cluster.ts';
export {
  type PrivateSentinelSet,
  type PrivateSentinelSetOptions,
  startPrivateSentinelSet,
} from './redis-sentinel-set.ts';
export {
  closedPort,
  type DetachedRedisOptions,
  type PrivateRedis,
  type PrivateSentinel,
  startDetachedRedis,
  startPrivateRedis,
  startPrivateSentinel,
} from './redis-server.ts';
export { startTcpProxy, type TcpProxy, type TcpProxyOptions } from './tcp-proxy.ts';
export {
  makeTestCertificates,
  startTlsRabbitmq,
  startTlsRedis,
  type TestCertificates,
  type TlsBroker,
} from './tls-brokers.ts';
export { sleep, waitFor } from './wait-for.ts';
