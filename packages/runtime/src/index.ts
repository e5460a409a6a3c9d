export { AckBatch, type AckPlan, ackPlan } from './amqp/ack-batch.ts';
export { AmqpClient, type AmqpClientOptions } from './amqp/amqp-client.ts';
export { type AmqpMetrics, createAmqpMetrics, MESSAGE_OUTCOMES } from './amqp/amqp-metrics.ts';
export {
  AmqpUrlListError,
  amqpUrlListSetting,
  BrokerAddresses,
  parseAmqpUrlList,
} from './amqp/broker-addresses.ts';
export { amqpSocket, coalesceWrites } from './amqp/coalesced-writes.ts';
export { amqpConnectFailure, RABBITMQ_START_HINT } from './amqp/connect-failure.ts';
export { type ConsumerOptions, type DeadLetterSink, ManagedConsumer } from './amqp/consumer.ts';
export { ConfirmedPublisher, type PublishOptions } from './amqp/publisher.ts';
export {
  declareDeadLetterTopology,
  declareEventsTopology,
  declareWorkQueue,
  EVENT_JOURNAL_BINDINGS,
  type TopologyDeclaration,
  WORK_QUEUE_DELIVERY_LIMIT,
} from './amqp/topology.ts';
export { exponentialBackoff } from './backoff.ts';
export {
  BROKER_START_HINTS,
  type BrokerName,
  type BrokerStartHint,
  brokerStartCommand,
  brokerStartHint,
} from './broker-start-hints.ts';
export { booleanSetting } from './config/boolean-setting.ts';
export { issueProblem, valueAtPath } from './config/issue-problem.ts';
export {
  type JobLockOptions,
  jobLockOptions,
  jobLockSettingsShape,
  RENAMED_SETTINGS,
  refuseRenamedSettings,
} from './config/job-lock-settings.ts';
export { likelyMeant } from './config/likely-meant.ts';
export { type ConfigSource, environmentSource, parseConfig, unknownKeys } from './config/parse-config.ts';
export {
  checkRedisTopology,
  loadRuntimeConfig,
  type RuntimeConfig,
  runtimeConfigSchema,
} from './config/runtime-config.ts';
export { isSecretKey, redactUrl } from './config/secret-keys.ts';
export { readTlsFiles, TLS_FILE_KEYS, type TlsBroker, type TlsFiles } from './config/tls-files.ts';
export {
  type OwnVariables,
  ownVariablesOf,
  type UnknownVariable,
  unknownVariables,
} from './config/unknown-variables.ts';
export { readYamlMapping } from './config/yaml-file.ts';
export {
  BrokerRefusedError,
  BrokerUnreachableError,
  ConfigError,
  type ConfigProblem,
  describeConfigProblem,
  PublishNotConfirmedError,
  RejectedMessageError,
  ShutdownTimeoutError,
  UnroutableMessageError,
  WHOLE_FILE_KEY,
} from './errors.ts';
export { EVENTS_REPEATED_EVERY_POLL_CYCLE, EventJournal } from './events/event-journal.ts';
export { EventPublisher, type EventPublishOptions, eventMessageOptions } from './events/event-publisher.ts';
export { AdminServer, type AdminServerOptions, type HealthCheck } from './http/admin-server.ts';
export { listenErrorAsConfigError } from './http/listen-error.ts';
export { createMetricsRegistry, exportAtZero } from './http/metrics-registry.ts';
export { parseJobData } from './jobs/job-data.ts';
export { assertJobLock, JobLockLostError } from './jobs/job-lock.ts';
export { createLogger, type Logger, type LoggerOptions, REDACTED_PATHS } from './logger.ts';
export {
  type ConnectionSettings,
  OnDemandConnections,
  type OnDemandConnectionsOptions,
} from './on-demand-connections.ts';
export {
  ACTION_CLAIM_RECORD_SECONDS,
  ActionClaims,
  type ClaimAnswer,
  type ClaimHolder,
} from './redis/action-claims.ts';
export {
  blankMemoryReason,
  DeploymentGeneration,
  GenerationMarker,
  type GenerationObservation,
  type GenerationVerdict,
  generationMarkerKey,
  judgeGeneration,
} from './redis/deployment-generation.ts';
export { FencingTokenGuard } from './redis/fencing-token-guard.ts';
export {
  LeaderLease,
  type LeaderLeaseOptions,
  type LeaseHolder,
  leaseTokenKey,
  nodeMonitorLeaderKey,
} from './redis/leader-lease.ts';
export {
  closeRedisClient,
  isRedisCluster,
  keyPrefixHashTag,
  type RedisClient,
  scanKeys,
} from './redis/redis-client.ts';
export {
  bullmqPrefix,
  CLUSTER_MAX_REDIRECTIONS,
  CLUSTER_RETRY_DELAY_MILLISECONDS,
  connectRedis,
  parseRedisNodes,
  parseSentinels,
  type RedisExtraOptions,
  type RedisNodeAddress,
  type RedisRole,
  type RedisSettings,
  redisClusterOptions,
  redisKey,
  redisOptions,
  redisSettingsFrom,
} from './redis/redis-connection.ts';
export { REDIS_REFUSED_EVENT, redisDatabaseIndex } from './redis/redis-refusal.ts';
export {
  defineRedisScripts,
  type RedisScript,
  RedisScriptNotDefinedError,
  redisScriptSource,
  runScript,
} from './redis/redis-script.ts';
export {
  isRedisOutOfMemory,
  type RedisMemoryReading,
  type RedisWriteRefusal,
  RedisWriteRefusalWatch,
  type RedisWriteRefusalWatchOptions,
  redisWriteRefusal,
} from './redis/redis-write-refusal-watch.ts';
export {
  type ListedWorker,
  WORKER_HEARTBEAT_REFRESH_SECONDS,
  WORKER_HEARTBEAT_TTL_SECONDS,
  type WorkerIdentity,
  WorkerRegistry,
  type WorkerRegistryOptions,
} from './redis/worker-registry.ts';
export {
  EXIT_CONFIG,
  EXIT_UNAVAILABLE,
  RUNTIME_VERSION,
  runMain,
  type ServiceContext,
  type StartServiceOptions,
  startService,
} from './service.ts';
export { GracefulShutdown, type ShutdownOptions, type ShutdownStep, withTimeout } from './shutdown.ts';
