/**
 * The restart was attempted and did not bring the guest back: the server did not reach SHUTOFF or
 * ACTIVE within its wait, Nova refused a call, or Nova kept a task under way past the wait. The job
 * ends with outcome `failed` (Masakari's `error`) and `reason` in words.
 */
export class InstanceRestartFailedError extends Error {
  constructor(
    readonly instanceId: string,
    readonly reason: string,
  ) {
    super(`instance ${instanceId} was not restarted: ${reason}`);
    this.name = 'InstanceRestartFailedError';
  }
}
