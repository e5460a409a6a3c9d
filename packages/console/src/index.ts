export { checkOperatorToken, presentedToken, WriteRefusedError } from './actions/operator-token.ts';
export { ActionForm, type ActionResult, REHABILITATE_WAIT_SECONDS, runAction } from './actions/run-action.ts';
export {
  type ConsoleConfig,
  consoleConfigSchema,
  DEFAULT_CONSOLE_PORT,
  loadConsoleConfig,
} from './config.ts';
export { ConsoleConnections } from './connections.ts';
export {
  FEED_RETRY_SECONDS,
  type RunningConsole,
  runConsoleProcess,
  type StartConsoleOptions,
  startConsole,
} from './console.ts';
export { FRAGMENT_HEADER } from './http/page-routes.ts';
export { EventFeed, type LiveNotice } from './live/event-feed.ts';
export {
  type FleetView,
  protection,
  type ThresholdHeadroom,
  thresholdHeadroom,
  thresholdHeadroomOf,
} from './readers/fleet.ts';
export { type Seen, see } from './readers/seen.ts';
export { describeStep, type TimelineStep, timelineEnd, timelineSteps } from './readers/timeline-steps.ts';
