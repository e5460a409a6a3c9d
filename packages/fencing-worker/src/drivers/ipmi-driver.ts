import type { IpmiMethod } from '../configuration/fence-methods.ts';
import { normaliseIdentity } from '../configuration/method-schemas.ts';
import { FencingError } from '../errors.ts';
import { redactSecrets, tail } from '../process/redact-secrets.ts';
import { type ProgramResult, runProgram, SYSTEM_PATH } from '../process/run-program.ts';
import {
  confirmPowerOff,
  type DriverContext,
  type FenceDriver,
  type PowerOffOutcome,
  type PowerState,
  withRetries,
} from './fence-driver.ts';

/** Where ipmitool is (LIFEGUARD_IPMITOOL_PATH). */
export const DEFAULT_IPMITOOL_PATH = '/usr/bin/ipmitool';

/** The settings ipmitool needs to reach one BMC; the password travels in IPMITOOL_PASSWORD only. */
export interface IpmitoolTarget {
  address: string;
  port: number;
  login: string;
  password: string;
  cipherSuite: number | null;
  /** `lanplus` (IPMI v2, the default) or `lan` (IPMI v1.5). */
  interface: 'lanplus' | 'lan';
}

/** ipmitool's answers (with `-v`) when the BMC rejected the user name, password or privilege. */
const CREDENTIALS_REJECTED =
  /RAKP 2 HMAC is invalid|unauthorized name|invalid (user ?name|password)|insufficient privilege|unauthorized role/i;

/**
 * Runs ipmitool commands against one BMC: `ipmitool -I lanplus -H <ip> -p <port> -U <login> -E
 * [-C <suite>] -v <command>`, with a minimal environment holding the password in IPMITOOL_PASSWORD,
 * as InstanceHA does (docs/instance-ha-rules.md#fence-agents) — never `-P`, which would put it in argv. `-v` makes ipmitool
 * say on standard error why a session failed, which tells wrong credentials (never retried) from an
 * unreachable BMC (retried).
 */
export class Ipmitool {
  constructor(
    private readonly target: IpmitoolTarget,
    private readonly context: DriverContext,
    private readonly ipmitoolPath = DEFAULT_IPMITOOL_PATH,
  ) {}

  /** `ipmi 10.0.0.5:623`, for messages. */
  get label(): string {
    return `ipmitool ${this.target.address}:${this.target.port}`;
  }

  /**
   * Runs one command and returns its standard output.
   * @throws FencingError `credentials` when the BMC rejected the login, `unreachable` on a timeout or
   *   no session, `refused` for other non-zero exits
   */
  async run(command: ReadonlyArray<string>, timeoutMilliseconds: number): Promise<string> {
    const { address, port, login, password, cipherSuite } = this.target;
    const args = ['-I', this.target.interface, '-H', address, '-p', String(port), '-U', login, '-E'];
    if (cipherSuite !== null) args.push('-C', String(cipherSuite));
    args.push('-v', ...command);
    let result: ProgramResult;
    try {
      result = await runProgram(this.ipmitoolPath, {
        args,
        env: { PATH: SYSTEM_PATH, LANG: 'C', LC_ALL: 'C', IPMITOOL_PASSWORD: password },
        timeoutMilliseconds,
      });
    } catch (error) {
      throw new FencingError(
        'configuration',
        `${this.label}: cannot run ${this.ipmitoolPath}: ${(error as Error).message}`,
      );
    }
    if (result.exitCode === 0 && !result.timedOut) return result.stdout;
    const what = `${this.label} ${command.join(' ')}`;
    const output = redactSecrets(`${result.stdout}\n${result.stderr}`, [...this.context.secrets, password]);
    const detail = tail(
      output
        .split('\n')
        .filter(
          (line) =>
            !/^Loading IANA|^Running Get VSO|^Invalid completion code received: Invalid command|^Discovered IPMB/.test(
              line,
            ),
        )
        .join('\n'),
      300,
    );
    if (result.timedOut) {
      throw new FencingError('unreachable', `${what}: no answer within ${timeoutMilliseconds} ms`);
    }
    if (CREDENTIALS_REJECTED.test(result.stderr)) {
      throw new FencingError('credentials', `${what}: the BMC rejected the credentials (${detail})`);
    }
    if (
      /Unable to establish|Get Auth Capabilities error|Get Session Challenge|No response|timed out/i.test(
        output,
      )
    ) {
      throw new FencingError('unreachable', `${what}: no IPMI session (${detail})`);
    }
    throw new FencingError('refused', `${what}: exit status ${result.exitCode} (${detail})`);
  }

  /** `power status` → on/off. */
  async powerStatus(timeoutMilliseconds: number): Promise<PowerState> {
    const output = await this.run(['power', 'status'], timeoutMilliseconds);
    // InstanceHA compares the upper-cased output with "CHASSIS POWER IS OFF" (docs/instance-ha-rules.md#fence-agents).
    if (/^\s*CHASSIS POWER IS OFF\s*$/m.test(output.toUpperCase())) return 'off';
    if (/^\s*CHASSIS POWER IS ON\s*$/m.test(output.toUpperCase())) return 'on';
    throw new FencingError('refused', `${this.label} power status: unexpected answer "${tail(output, 120)}"`);
  }

  /** `mc guid` → the GUID ipmitool prints, normalised. */
  async guid(timeoutMilliseconds: number): Promise<string> {
    const output = await this.run(['mc', 'guid'], timeoutMilliseconds);
    const match = /GUID\s*:\s*([0-9a-fA-F-]{32,36})/.exec(output);
    if (!match) throw new FencingError('refused', `${this.label} mc guid: no GUID in "${tail(output, 120)}"`);
    return normaliseIdentity(match[1]!);
  }
}

/**
 * `agent: ipmi` (docs/instance-ha-rules.md#fence-agents): `power off` up to 3 attempts (1 s, 2 s apart) on a timeout or a
 * failure, then `power status` once per second until the chassis reads off or the method's timeout
 * passes; `power on` does not wait. The BMC's identity is its GUID (`mc guid`).
 */
export class IpmiDriver implements FenceDriver {
  private readonly ipmitool: Ipmitool;

  constructor(
    readonly method: IpmiMethod,
    private readonly context: DriverContext,
    ipmitoolPath = DEFAULT_IPMITOOL_PATH,
  ) {
    this.ipmitool = new Ipmitool(
      {
        address: method.address,
        port: method.port,
        login: method.login,
        password: method.password,
        cipherSuite: method.cipherSuite,
        interface: 'lanplus',
      },
      context,
      ipmitoolPath,
    );
  }

  private get timeoutMilliseconds(): number {
    return this.method.timeoutSeconds * 1000;
  }

  async powerOff(): Promise<PowerOffOutcome> {
    const { attempts } = await withRetries(`${this.ipmitool.label} power off`, this.context, () =>
      this.ipmitool.run(['power', 'off'], this.timeoutMilliseconds),
    );
    await confirmPowerOff(this.ipmitool.label, this.method.timeoutSeconds, this.context, (remaining) =>
      this.ipmitool.powerStatus(Math.min(remaining, this.timeoutMilliseconds)),
    );
    return { alreadyOff: false, attempts, verified: true };
  }

  async powerOn(): Promise<void> {
    await withRetries(`${this.ipmitool.label} power on`, this.context, () =>
      this.ipmitool.run(['power', 'on'], this.timeoutMilliseconds),
    );
  }

  async powerStatus(): Promise<PowerState> {
    return (
      await withRetries(`${this.ipmitool.label} power status`, this.context, () =>
        this.ipmitool.powerStatus(this.timeoutMilliseconds),
      )
    ).result;
  }

  async readIdentity(): Promise<string> {
    return (
      await withRetries(`${this.ipmitool.label} mc guid`, this.context, () =>
        this.ipmitool.guid(this.timeoutMilliseconds),
      )
    ).result;
  }
}
