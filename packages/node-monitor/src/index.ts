export {
  type AdmissionDecision,
  type AdmissionDependencies,
  type AdmittedHost,
  admit,
  type BlockedHosts,
} from './admission/admission.ts';
export {
  AGGREGATE_MAX_FAILURES_KEY,
  type AggregateLimitResult,
  type AggregateTrip,
  evaluateAggregateLimits,
} from './admission/aggregate-limit.ts';
export { type AllServicesStaleResult, allServicesStale } from './admission/all-services-stale.ts';
export {
  type Candidate,
  type DeduplicationResult,
  type DroppedHost,
  deduplicate,
  needsAnnouncement,
} from './admission/deduplicate.ts';
export {
  HeartbeatGate,
  type HeartbeatGateResult,
  type HeartbeatGateSettings,
} from './admission/heartbeat-gate.ts';
export { applyRateLimit } from './admission/rate-limit.ts';
export { EvacuabilityChecker, type EvacuabilityResult, type NotEvacuableReason } from './evacuability.ts';
export type { EventSink } from './event-sink.ts';
export { loadHeartbeatKeys } from './heartbeat/heartbeat-keys.ts';
export { HeartbeatListener, type HeartbeatRefusal } from './heartbeat/heartbeat-listener.ts';
export {
  encodeHeartbeat,
  HEARTBEAT_MAGIC,
  type HeartbeatRejection,
  type HeartbeatResult,
  verifyHeartbeat,
} from './heartbeat/heartbeat-packet.ts';
export { HeartbeatReplayGuard } from './heartbeat/heartbeat-replay.ts';
export { HeartbeatStore } from './heartbeat/heartbeat-store.ts';
export { evidenceOf } from './host-down-evidence.ts';
export {
  LOST_WITH_REDIS,
  type RebuildReport,
  RedisMemoryWatch,
  type RedisMemoryWatchDependencies,
} from './memory/redis-memory-watch.ts';
export { createNodeMonitorMetrics, type NodeMonitorMetrics } from './metrics.ts';
export {
  type EarlyPoll,
  earlyPoll,
  STALE_MARGIN_MILLISECONDS,
  secondsUntilNextPoll,
} from './next-poll.ts';
export {
  type NodeMonitorOptions,
  type RunningNodeMonitor,
  startNodeMonitor,
} from './node-monitor.ts';
export { NotLeaderError } from './not-leader-error.ts';
export {
  type CycleReport,
  type Leadership,
  PollCycle,
  type PollCycleDependencies,
  type PublishedHostDown,
} from './poll-cycle.ts';
export { PollLoop, type PollLoopOptions } from './poll-loop.ts';
export { loadNodeMonitorSettings, type NodeMonitorSettings, nodeMonitorSettingsSchema } from './settings.ts';
