export { HeartbeatSender, type HeartbeatSenderOptions } from './heartbeat-sender.ts';
export { createHostAgentLogger, type HostAgent, startHostAgent } from './host-agent.ts';
export { type ProcessEntry, processStates, readProcesses } from './process-states.ts';
export {
  type HeartbeatNetwork,
  HOST_AGENT_HTTP_PORT,
  HostAgentConfigError,
  type HostAgentSettings,
  loadHostAgentSettings,
  NETWORK_VARIABLE_PREFIX,
  parseMonitor,
  parseNetworks,
} from './settings.ts';
