import {
  type FenceAgentMethod,
  IPMI_FENCE_AGENTS,
  REDFISH_FENCE_AGENTS,
} from '../configuration/fence-methods.ts';
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
import { DEFAULT_IPMITOOL_PATH, Ipmitool } from './ipmi-driver.ts';
import { RedfishClient } from './redfish-client.ts';

/** The fence-agent actions lifeguard uses. */
export type FenceAgentAction = 'off' | 'on' | 'status';

/** Output of fence agents that means the BMC refused the login (fencing library messages, ipmitool -v). */
const CREDENTIALS_REJECTED =
  /RAKP 2 HMAC is invalid|unauthorized name|You have to set login password|does not have the correct privileges|\b(401|403)\b.*(Unauthori[sz]ed|Forbidden)|Invalid (user ?name|password|credentials)|Authentication failed|Login (failed|incorrect)/i;

/** Output that means the device did not answer in time or at all. */
const UNREACHABLE =
  /Connection timed out|Connection refused|Connection lost|No route to host|Network is unreachable|timed out|Unable to connect\/login to fencing device|Max retries exceeded/i;

/** Optional hooks, for tests and diagnostics. */
export interface FenceAgentHooks {
  /** Called with the agent's process id right after it started. */
  onSpawn?: (pid: number, action: FenceAgentAction) => void;
}

/**
 * Any program of the fence-agents project through the standard fence-agent interface: options as
 * `key=value` lines on standard input (no arguments at all, so nothing reaches argv), `action=off|on|status`,
 * and the exit status read as the fencing library defines it — 0 success (for `status`: on), 2 for
 * `status`: off, anything else a failure (docs/instance-ha-rules.md#fence_ipmilan-and-fence_redfish). Values are written in double quotes, which
 * the library strips, so a password keeps leading/trailing spaces and its own quotes.
 *
 * `powerOff` runs `off` (3 attempts, 1 s and 2 s apart) and then CONFIRMS with `status` until the
 * agent exits 2, within the method's timeout — the agent's own "Success: Powered OFF" is not taken
 * on its word. When an agent fails without saying why, IPMI agents (fence_ipmilan and its aliases) and
 * fence_redfish are asked again natively (ipmitool, a Redfish GET) to tell rejected credentials —
 * never retried — from an unreachable BMC.
 */
export class FenceAgentDriver implements FenceDriver {
  constructor(
    readonly method: FenceAgentMethod,
    private readonly context: DriverContext,
    private readonly hooks: FenceAgentHooks = {},
    private readonly ipmitoolPath = DEFAULT_IPMITOOL_PATH,
  ) {}

  private get label(): string {
    return `${this.method.program}${this.method.address ? ` ${this.method.address}` : ''}`;
  }

  /** The agent's standard input for an action: one `key="value"` line per option. */
  stdinFor(action: FenceAgentAction): string {
    const method = this.method;
    const lines: Array<[string, string]> = [['action', action]];
    if (method.address !== null) lines.push(['ip', method.address]);
    if (method.port !== null) lines.push(['ipport', String(method.port)]);
    if (method.login !== null) lines.push(['username', method.login]);
    if (method.password !== null) lines.push(['password', method.password]);
    if (method.plug !== null) lines.push(['plug', method.plug]);
    for (const [key, value] of Object.entries(method.options)) lines.push([key, value]);
    return `${lines.map(([key, value]) => `${key}="${value}"`).join('\n')}\n`;
  }

  private async run(action: FenceAgentAction, timeoutMilliseconds: number): Promise<ProgramResult> {
    try {
      return await runProgram(this.method.path, {
        args: [],
        env: { PATH: SYSTEM_PATH, LANG: 'C', LC_ALL: 'C', PYTHONWARNINGS: 'ignore' },
        stdin: this.stdinFor(action),
        timeoutMilliseconds,
        onSpawn: (pid) => this.hooks.onSpawn?.(pid, action),
      });
    } catch (error) {
      throw new FencingError(
        'configuration',
        `${this.label}: cannot run ${this.method.path}: ${(error as Error).message}`,
      );
    }
  }

  private output(result: ProgramResult): string {
    const { password, login } = this.method;
    const basic = password && login ? Buffer.from(`${login}:${password}`).toString('base64') : null;
    return redactSecrets(`${result.stdout}\n${result.stderr}`, [...this.context.secrets, password, basic]);
  }

  /** Classifies a failed run; asks the BMC natively when the output does not say why. */
  private async failure(
    action: FenceAgentAction,
    result: ProgramResult,
    timeoutMilliseconds: number,
  ): Promise<FencingError> {
    const what = `${this.label} action=${action}`;
    const output = this.output(result);
    const detail = tail(
      output
        .split('\n')
        .filter((line) => !/DeprecationWarning|from pipes import/.test(line))
        .join('\n'),
      400,
    );
    if (result.timedOut)
      return new FencingError('unreachable', `${what}: no result within ${timeoutMilliseconds} ms`);
    if (CREDENTIALS_REJECTED.test(output)) {
      return new FencingError('credentials', `${what}: the device rejected the credentials (${detail})`);
    }
    const diagnosis = await this.diagnose(timeoutMilliseconds);
    if (diagnosis) {
      return new FencingError(
        diagnosis.kind,
        `${what}: exit status ${result.exitCode} (${detail}); ${diagnosis.message}`,
      );
    }
    if (UNREACHABLE.test(output))
      return new FencingError('unreachable', `${what}: exit status ${result.exitCode} (${detail})`);
    return new FencingError('agent-failed', `${what}: exit status ${result.exitCode} (${detail})`);
  }

  /** For IPMI and Redfish agents: the native check's error, or null when the BMC answers fine. */
  private async diagnose(timeoutMilliseconds: number): Promise<FencingError | null> {
    try {
      if (IPMI_FENCE_AGENTS.has(this.method.program) && this.canReachNatively()) {
        await this.ipmitool().powerStatus(Math.min(timeoutMilliseconds, 15_000));
      } else if (REDFISH_FENCE_AGENTS.has(this.method.program) && this.canReachNatively()) {
        await this.redfish().powerState();
      } else {
        return null;
      }
      return null;
    } catch (error) {
      return error instanceof FencingError ? error : null;
    }
  }

  private canReachNatively(): boolean {
    return this.method.address !== null && this.method.login !== null && this.method.password !== null;
  }

  private ipmitool(): Ipmitool {
    const { options } = this.method;
    const lanplus = options.lanplus ?? (this.method.program === 'fence_ipmilan' ? '0' : '1');
    return new Ipmitool(
      {
        address: this.method.address!,
        port: this.method.port ?? 623,
        login: this.method.login!,
        password: this.method.password!,
        cipherSuite:
          options.cipher !== undefined && /^\d+$/.test(options.cipher) ? Number(options.cipher) : null,
        interface: ['1', 'yes', 'on', 'true'].includes(lanplus.toLowerCase()) ? 'lanplus' : 'lan',
      },
      this.context,
      this.ipmitoolPath,
    );
  }

  private redfish(): RedfishClient {
    const { options } = this.method;
    // fence_redfish always speaks https (it builds https:// URLs whatever `ssl` says).
    return new RedfishClient({
      useTls: true,
      address: this.method.address!,
      port: this.method.port ?? 443,
      login: this.method.login!,
      password: this.method.password!,
      systemPath: options['systems-uri'] ?? options.systems_uri ?? null,
      tls: this.method.tlsSettings,
      timeoutMilliseconds: this.method.timeoutSeconds * 1000,
    });
  }

  /** Runs `action` once; resolves with the run for exit 0 (and exit 2 for status), else throws. */
  private async runChecked(action: FenceAgentAction, timeoutMilliseconds: number): Promise<ProgramResult> {
    const result = await this.run(action, timeoutMilliseconds);
    if (!result.timedOut && (result.exitCode === 0 || (action === 'status' && result.exitCode === 2)))
      return result;
    throw await this.failure(action, result, timeoutMilliseconds);
  }

  private async status(timeoutMilliseconds: number): Promise<PowerState> {
    const result = await this.runChecked('status', timeoutMilliseconds);
    return result.exitCode === 2 ? 'off' : 'on';
  }

  async powerOff(): Promise<PowerOffOutcome> {
    const timeout = this.method.timeoutSeconds * 1000;
    const { result, attempts } = await withRetries(`${this.label} action=off`, this.context, () =>
      this.runChecked('off', timeout),
    );
    await confirmPowerOff(this.label, this.method.timeoutSeconds, this.context, (remaining) =>
      this.status(Math.min(remaining, timeout)),
    );
    return { alreadyOff: /Already OFF/i.test(result.stdout), attempts, verified: true };
  }

  async powerOn(): Promise<void> {
    await withRetries(`${this.label} action=on`, this.context, () =>
      this.runChecked('on', this.method.timeoutSeconds * 1000),
    );
  }

  async powerStatus(): Promise<PowerState> {
    return (
      await withRetries(`${this.label} action=status`, this.context, () =>
        this.status(this.method.timeoutSeconds * 1000),
      )
    ).result;
  }

  async readIdentity(): Promise<string> {
    if (this.method.expectedGuid !== null) {
      return (
        await withRetries(`${this.label} mc guid`, this.context, () =>
          this.ipmitool().guid(this.method.timeoutSeconds * 1000),
        )
      ).result;
    }
    if (this.method.expectedSystemUuid !== null) {
      return (await withRetries(`${this.label} GET UUID`, this.context, () => this.redfish().systemUuid()))
        .result;
    }
    throw new FencingError('configuration', `${this.label}: no identity to check is configured`);
  }
}
