import type { RedfishMethod } from '../configuration/fence-methods.ts';
import {
  confirmPowerOff,
  type DriverContext,
  type FenceDriver,
  type PowerOffOutcome,
  type PowerState,
  withRetries,
} from './fence-driver.ts';
import { RedfishClient } from './redfish-client.ts';

/**
 * `agent: redfish` (docs/instance-ha-rules.md#fence-agents): ForceOff / On through `ComputerSystem.Reset` with basic auth.
 * 2xx on ForceOff → read `PowerState` every second until Off (timeout → not confirmed); 400/409 →
 * read `PowerState`: Off means "already off" for ForceOff, and for On it is retried (some BMCs refuse
 * On right after ForceOff); 401/403 end at once; 5xx, timeouts and connection errors are retried,
 * 3 attempts in all. The identity is the system's Redfish `UUID`.
 */
export class RedfishDriver implements FenceDriver {
  private readonly client: RedfishClient;

  constructor(
    readonly method: RedfishMethod,
    private readonly context: DriverContext,
  ) {
    this.client = new RedfishClient({
      useTls: method.useTls,
      address: method.address,
      port: method.port,
      login: method.login,
      password: method.password,
      systemPath: `/redfish/v1/Systems/${method.systemId}`,
      tls: method.tlsSettings,
      timeoutMilliseconds: method.timeoutSeconds * 1000,
    });
  }

  async powerOff(): Promise<PowerOffOutcome> {
    const { result, attempts } = await withRetries(`${this.client.label} ForceOff`, this.context, () =>
      this.client.reset('ForceOff'),
    );
    if (result !== 'already-off') {
      await confirmPowerOff(this.client.label, this.method.timeoutSeconds, this.context, () =>
        this.client.powerState(),
      );
    }
    return { alreadyOff: result === 'already-off', attempts, verified: true };
  }

  async powerOn(): Promise<void> {
    await withRetries(`${this.client.label} On`, this.context, () => this.client.reset('On'));
  }

  async powerStatus(): Promise<PowerState> {
    return (
      await withRetries(`${this.client.label} GET PowerState`, this.context, () => this.client.powerState())
    ).result;
  }

  async readIdentity(): Promise<string> {
    return (await withRetries(`${this.client.label} GET UUID`, this.context, () => this.client.systemUuid()))
      .result;
  }
}
