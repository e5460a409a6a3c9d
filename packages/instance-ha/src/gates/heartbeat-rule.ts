/**
 * The heartbeat rule (docs/instance-ha-rules.md#g2-and-g3-heartbeats), one for the node monitor's
 * admission (G3, and the cliff's count of active hosts) and every later action's re-check (the
 * heartbeat gate): a host whose OS sent a heartbeat within HEARTBEAT_TIMEOUT is alive, whatever Nova
 * says of its compute service.
 * @param lastHeartbeat the host's last heartbeat, or undefined when none was recorded
 * @param heartbeatTimeoutSeconds HEARTBEAT_TIMEOUT
 */
export function sendsHeartbeats(
  lastHeartbeat: Date | undefined,
  now: Date,
  heartbeatTimeoutSeconds: number,
): boolean {
  return (
    lastHeartbeat !== undefined && now.getTime() - lastHeartbeat.getTime() <= heartbeatTimeoutSeconds * 1000
  );
}
