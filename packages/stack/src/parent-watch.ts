/**
 * Preloaded into every worker the stack starts (through NODE_OPTIONS `--import`, so the command line
 * stays the compose file's): when the launcher whose pid is LIFEGUARD_STACK_PARENT_PID is gone (killed
 * with SIGKILL, a crashed test), the worker sends itself SIGTERM and shuts down gracefully instead of
 * running on unattended. Checked once a second; the timer never keeps the process alive.
 */
import { watchParentProcess } from './parent-process.ts';

const parent = Number(process.env.LIFEGUARD_STACK_PARENT_PID);
if (Number.isInteger(parent) && parent > 1) {
  watchParentProcess(parent, () => process.kill(process.pid, 'SIGTERM'));
}
