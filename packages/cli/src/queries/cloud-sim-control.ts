import { z } from 'zod';
import { CliError } from '../errors.ts';

/** One host as cloud-sim's `GET /_sim/state` reports it. */
export const SimHostState = z.object({
  host: z.string(),
  state: z.string(),
  status: z.string(),
  /** The service's `disabled_reason` (absent from an older cloud-sim). */
  disabledReason: z.string().nullable().optional(),
  forcedDown: z.boolean(),
  computeRunning: z.boolean(),
  powerState: z.string(),
  partitioned: z.boolean(),
  servers: z.number(),
});
export type SimHostState = z.infer<typeof SimHostState>;

/** cloud-sim's `GET /_sim/state`. */
export const SimState = z.looseObject({
  hosts: z.array(SimHostState),
  servers: z.number(),
  migrations: z.number(),
  evacuationsInFlight: z.number(),
});
export type SimState = z.infer<typeof SimState>;

/**
 * The control URL (`.../_sim`) for what the operator gave: cloud-sim's API base (`http://host:8780`)
 * or the control URL itself.
 * @throws CliError for something that is not an http(s) URL
 */
export function controlUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new CliError(`not a URL: ${url} (expected cloud-sim's address, e.g. http://127.0.0.1:8780)`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new CliError(`not an http(s) URL: ${url}`);
  }
  const path = parsed.pathname.replace(/\/+$/, '');
  parsed.pathname = path.endsWith('/_sim') ? path : `${path}/_sim`;
  return parsed.toString().replace(/\/$/, '');
}

/**
 * A client of cloud-sim's control API (`/_sim`, no authentication; see docs/cloud-sim.md): host
 * faults (kill, revive, partition, heal) and the state of every host. Each call fails with a
 * CliError that says what went wrong: cloud-sim not reachable at the URL, an unknown host (404), or
 * cloud-sim's own reason (400).
 */
export class CloudSimControl {
  readonly url: string;

  constructor(url: string) {
    this.url = controlUrl(url);
  }

  private async call(method: 'GET' | 'POST', path: string, body?: unknown): Promise<unknown> {
    let response: Response;
    try {
      response = await fetch(`${this.url}${path}`, {
        method,
        ...(body === undefined
          ? {}
          : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
        signal: AbortSignal.timeout(10_000),
      });
    } catch (error) {
      throw new CliError(
        `cloud-sim is not reachable at ${this.url}: ${(error as Error).cause ? String(((error as Error).cause as Error).message) : (error as Error).message}`,
        [
          'start it (`npm start` runs it when no cloud is configured), or point LIFEGUARD_CLOUD_SIM_URL or --sim-url at it',
        ],
      );
    }
    const text = await response.text();
    if (!response.ok) {
      let reason = text;
      try {
        reason = (JSON.parse(text) as { error?: string }).error ?? text;
      } catch {
        // not JSON: keep the text
      }
      throw new CliError(`cloud-sim refused ${method} ${path} (HTTP ${response.status}): ${reason}`);
    }
    return text ? JSON.parse(text) : null;
  }

  /** Every host's liveness, power and partition. */
  async state(): Promise<SimState> {
    const parsed = SimState.safeParse(await this.call('GET', '/state'));
    if (!parsed.success) throw new CliError(`cloud-sim at ${this.url} answered an unexpected state document`);
    return parsed.data;
  }

  /** nova-compute of the host dies: heartbeats stop; its power stays on until fenced. */
  async killHost(host: string): Promise<void> {
    await this.call('POST', `/hosts/${encodeURIComponent(host)}/kill`);
  }

  /** nova-compute of the host (re)starts (and cleans up evacuated instances). */
  async reviveHost(host: string): Promise<void> {
    await this.call('POST', `/hosts/${encodeURIComponent(host)}/revive`);
  }

  /** Cuts the hosts off the control plane (their heartbeats stop arriving; power unaffected). */
  async partition(hosts: ReadonlyArray<string>): Promise<void> {
    await this.call('POST', '/partition', { hosts });
  }

  /** Ends the partition of these hosts, or of every partitioned host. */
  async heal(hosts?: ReadonlyArray<string>): Promise<void> {
    await this.call('POST', '/heal', hosts && hosts.length > 0 ? { hosts } : {});
  }
}

/**
 * The `count` hosts `sim partition <n>` cuts off: hosts that are up, running and not yet partitioned,
 * in name order (`compute2` before `compute10`).
 * @throws CliError when fewer than `count` such hosts exist
 */
export function pickPartitionHosts(state: SimState, count: number): string[] {
  const candidates = state.hosts
    .filter((host) => !host.partitioned && host.computeRunning && host.powerState === 'On')
    .map((host) => host.host)
    .sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
  if (candidates.length < count) {
    throw new CliError(
      `cannot partition ${count} host(s): only ${candidates.length} of ${state.hosts.length} are running and not partitioned`,
    );
  }
  return candidates.slice(0, count);
}
