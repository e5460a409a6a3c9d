export { loadHeartbeatKeys } from '@lifeguard/contracts';
export { EvacuabilityReader, type EvacuabilityReading } from './admission/evacuability-reader.ts';
export {
  type AdmissionDependencies,
  type AdmissionInputs,
  readCandidateFacts,
  runAdmission,
} from './admission/run-admission.ts';
export type { EventSink } from './event-sink.ts';
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
export {
  HostAgentDetection,
  type HostAgentDetectionOptions,
  type HostAgentDetectionResult,
} from './heartbeat/host-agent-detection.ts';
export { HostAgentReports, type HostAgentSnapshot } from './heartbeat/host-agent-reports.ts';
export { HostAgentWatch, type HostAgentWatchOptions } from './heartbeat/host-agent-watch.ts';
export {
  millisecondsToNextSilence,
  newlySilentHosts,
  SILENCE_CHECK_MILLISECONDS,
  SilenceTrigger,
  type SilenceTriggerOptions,
} from './heartbeat/silence-trigger.ts';
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
  earlierPoll,
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
export { POLL_DEADLINE_GRACE_SECONDS, PollDeadlineError, pollDeadlineMilliseconds } from './poll-deadline.ts';
export { PollLoop, type PollLoopOptions } from './poll-loop.ts';
export { loadNodeMonitorSettings, type NodeMonitorSettings, nodeMonitorSettingsSchema } from './settings.ts';
