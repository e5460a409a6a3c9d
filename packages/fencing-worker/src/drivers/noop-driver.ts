import type { NoopMethod } from '../configuration/fence-methods.ts';
import { FencingConfigurationError } from '../errors.ts';
import type { DriverContext, FenceDriver, PowerOffOutcome, PowerState } from './fence-driver.ts';

/**
 * `agent: noop` (InstanceHA: "logs a warning and reports success", docs/instance-ha-rules.md#fence-agents): touches nothing
 * and reports the power off as unverified (fence proof `noop`, never `power-off-confirmed`). For test beds only: it refuses to run unless LIFEGUARD_FENCING_ALLOW_NOOP
 * is true — checked when fencing.yaml is read and again here.
 */
export class NoopDriver implements FenceDriver {
  constructor(
    readonly method: NoopMethod,
    private readonly context: DriverContext & { allowNoop: boolean },
  ) {}

  private guard(action: string): void {
    if (!this.context.allowNoop) {
      throw new FencingConfigurationError(
        `noop ${action} refused: set LIFEGUARD_FENCING_ALLOW_NOOP=true to allow fencing that does nothing`,
      );
    }
    this.context.logger.warn(
      { method: 'noop', action },
      'noop fencing: nothing was powered off; instances may get corrupted',
    );
  }

  async powerOff(): Promise<PowerOffOutcome> {
    this.guard('off');
    return { alreadyOff: false, attempts: 1, verified: false };
  }

  async powerOn(): Promise<void> {
    this.guard('on');
  }

  async powerStatus(): Promise<PowerState> {
    this.guard('status');
    return 'off';
  }

  async readIdentity(): Promise<string> {
    throw new FencingConfigurationError('noop has no identity to check');
  }
}
