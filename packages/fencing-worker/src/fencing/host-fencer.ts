import type { Logger } from '@lifeguard/runtime';
import { describeMethod, type FenceMethod, type HostFencing } from '../configuration/fence-methods.ts';
import type { FencingConfiguration } from '../configuration/fencing-config.ts';
import { sameIdentity } from '../configuration/method-schemas.ts';
import { createDriver, type DriverFactoryContext } from '../drivers/create-driver.ts';
import type { FenceDriver, PowerState } from '../drivers/fence-driver.ts';
import {
  FenceIdentityMismatchError,
  FencingConfigurationError,
  FencingError,
  FencingFailedError,
} from '../errors.ts';
import { redactSecrets } from '../process/redact-secrets.ts';

/** A confirmed power-off. */
export interface PowerOffResult {
  host: string;
  /** The method that confirmed it (`ipmi`, `redfish`, `fence_ipmilan`, `noop`). */
  method: string;
  /** Its position in the host's topology (0 = first). */
  methodIndex: number;
  alreadyOff: boolean;
  /** True when the off state was read back from the BMC (false only for `noop`). */
  verified: boolean;
  /** Power commands sent over all methods tried. */
  attempts: number;
  /** Failures of the methods tried before the one that succeeded, in order. */
  failedMethods: ReadonlyArray<{ method: string; reason: string }>;
}

/** The identity fencing.yaml expects for a method, or null when none is given. */
export function expectedIdentity(method: FenceMethod): string | null {
  switch (method.kind) {
    case 'ipmi':
      return method.expectedGuid;
    case 'redfish':
      return method.expectedSystemUuid;
    case 'fence-agent':
      return method.expectedGuid ?? method.expectedSystemUuid;
    case 'noop':
      return null;
  }
}

/**
 * Fences hosts through their fencing topology: the methods of the host's fencing.yaml entry, tried
 * in order until one CONFIRMS the power off (InstanceHA has a single method and no fallback,
 * docs/instance-ha-rules.md#where-lifeguard-differs). Before a method powers anything off, the BMC's identity is compared with the one
 * fencing.yaml expects (Redfish system `UUID`, IPMI GUID), and a mismatch refuses that method.
 */
export class HostFencer {
  constructor(
    private readonly configuration: FencingConfiguration,
    private readonly context: DriverFactoryContext,
    private readonly logger: Logger = context.logger,
  ) {}

  /**
   * The host's entry, matched by short hostname.
   * @throws FencingConfigurationError (not recoverable) when fencing.yaml has no entry for it
   */
  entry(host: string): HostFencing {
    const found = this.configuration.find(host);
    if (!found) {
      throw new FencingConfigurationError(
        `${host} has no entry in fencing.yaml (FencingConfig keys are matched by short hostname)`,
      );
    }
    return found;
  }

  private driver(method: FenceMethod, logger: Logger = this.logger): FenceDriver {
    return createDriver(method, { ...this.context, logger });
  }

  private async checkIdentity(driver: FenceDriver): Promise<void> {
    const expected = expectedIdentity(driver.method);
    if (expected === null) return;
    const actual = await driver.readIdentity();
    if (!sameIdentity(expected, actual))
      throw new FenceIdentityMismatchError(driver.method.name, expected, actual);
  }

  private asFencingError(error: unknown): FencingError {
    if (error instanceof FencingError) return error;
    const message = redactSecrets(String((error as Error)?.message ?? error), this.configuration.secrets());
    return new FencingError('agent-failed', message);
  }

  /**
   * Powers the host off and confirms it, trying each method in order.
   * @param logger where the attempts are logged (default the fencer's; jobs pass theirs)
   * @throws FencingConfigurationError for a host without an entry; FencingFailedError when every
   *   method failed (not recoverable when none of the failures is)
   */
  async powerOff(host: string, logger: Logger = this.logger): Promise<PowerOffResult> {
    const entry = this.entry(host);
    const failures: Array<{ method: string; error: FencingError }> = [];
    let attempts = 0;
    for (const method of entry.methods) {
      const where = describeMethod(method);
      const driver = this.driver(method, logger);
      try {
        await this.checkIdentity(driver);
        logger.info({ host, method: where, methodIndex: method.index }, 'powering off');
        const outcome = await driver.powerOff();
        attempts += outcome.attempts;
        logger.info(
          { host, method: where, alreadyOff: outcome.alreadyOff, attempts: outcome.attempts },
          'power off confirmed',
        );
        return {
          host,
          method: method.name,
          methodIndex: method.index,
          alreadyOff: outcome.alreadyOff,
          verified: outcome.verified,
          attempts,
          failedMethods: failures.map((failure) => ({
            method: failure.method,
            reason: failure.error.message,
          })),
        };
      } catch (error) {
        const fencingError = this.asFencingError(error);
        attempts += 1;
        failures.push({ method: where, error: fencingError });
        const next = entry.methods[method.index + 1];
        logger.warn(
          {
            host,
            method: where,
            kind: fencingError.kind,
            reason: fencingError.message,
            ...(next ? { next: describeMethod(next) } : {}),
          },
          next ? 'fencing method failed; trying the next method' : 'fencing method failed; no method left',
        );
      }
    }
    throw new FencingFailedError(host, failures);
  }

  /**
   * Powers the host on through the first method that accepts it (identity checked first, as for off).
   * @throws FencingConfigurationError / FencingFailedError as powerOff
   */
  async powerOn(host: string, logger: Logger = this.logger): Promise<{ method: string }> {
    const entry = this.entry(host);
    const failures: Array<{ method: string; error: FencingError }> = [];
    for (const method of entry.methods) {
      const driver = this.driver(method, logger);
      try {
        await this.checkIdentity(driver);
        await driver.powerOn();
        logger.info({ host, method: describeMethod(method) }, 'powered on');
        return { method: method.name };
      } catch (error) {
        failures.push({ method: describeMethod(method), error: this.asFencingError(error) });
      }
    }
    throw new FencingFailedError(host, failures);
  }

  /** The power state read through the first method that answers. */
  async powerStatus(host: string): Promise<{ method: string; state: PowerState }> {
    const entry = this.entry(host);
    const failures: Array<{ method: string; error: FencingError }> = [];
    for (const method of entry.methods) {
      try {
        return { method: method.name, state: await this.driver(method).powerStatus() };
      } catch (error) {
        failures.push({ method: describeMethod(method), error: this.asFencingError(error) });
      }
    }
    throw new FencingFailedError(host, failures);
  }
}
