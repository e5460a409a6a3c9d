import { createHmac } from 'node:crypto';

/**
 * InstanceHA's HBV2 heartbeat, all integers in network byte order:
 * `magic u32 = 0x48425632 ("HBV2") | timestamp u64 (Unix seconds) | name field (UTF-8) | HMAC-SHA256`
 * over every preceding byte (32 bytes). At least 45 bytes (docs/instance-ha-rules.md#heartbeats).
 *
 * lifeguard's host agent keeps that framing and says more in the name field: the host's name, a NUL,
 * then its report, `key=value` pairs joined by `;` (docs/host-agent.md#the-packet):
 * `compute-1\0network=storage;nova-compute=running;libvirtd=stopped`. The HMAC covers the report.
 */
export const HEARTBEAT_MAGIC = 0x48425632;
export const HEARTBEAT_HMAC_BYTES = 32;
export const HEARTBEAT_MINIMUM_BYTES = 4 + 8 + 1 + HEARTBEAT_HMAC_BYTES;
/** The UDP port InstanceHA's listener takes heartbeats on (HEARTBEAT_PORT). */
export const HEARTBEAT_DEFAULT_PORT = 7411;

/** Whether a watched process runs on the host. */
export type ProcessState = 'running' | 'stopped';

/** What a host agent reports beside its host's name: the network it sent on, its watched processes. */
export interface HostAgentReport {
  /** The name of the network the heartbeat was sent on (as the agent's configuration names it). */
  readonly network: string;
  /** Each watched process (`nova-compute`, `libvirtd`, ...) and whether it runs. */
  readonly processes: Readonly<Record<string, ProcessState>>;
}

/** A report key or network name: lower-case letters, digits, `-`, `_`, `.`; 1 to 40 characters. */
export const REPORT_NAME = /^[a-z0-9][a-z0-9._-]{0,39}$/;
const PROCESS_STATES: ReadonlySet<string> = new Set<ProcessState>(['running', 'stopped']);

/**
 * The report's text, `network=<name>;<process>=<state>;...`.
 * @throws RangeError naming the network or process whose name REPORT_NAME refuses
 */
export function formatHostAgentReport(report: HostAgentReport): string {
  if (!REPORT_NAME.test(report.network)) throw new RangeError(`bad network name "${report.network}"`);
  for (const name of Object.keys(report.processes)) {
    if (!REPORT_NAME.test(name) || name === 'network') throw new RangeError(`bad process name "${name}"`);
  }
  return [
    `network=${report.network}`,
    ...Object.entries(report.processes).map(([name, state]) => `${name}=${state}`),
  ].join(';');
}

/**
 * The report in `text` (what follows the NUL of the name field), or null when `text` is not one:
 * a `network` pair first, then process pairs with a state of `running` or `stopped`, no name twice.
 */
export function parseHostAgentReport(text: string): HostAgentReport | null {
  const pairs = text.split(';').map((pair) => pair.split('='));
  if (pairs.some((pair) => pair.length !== 2 || !REPORT_NAME.test(pair[0]!))) return null;
  const [first, ...rest] = pairs as Array<[string, string]>;
  if (first?.[0] !== 'network' || !REPORT_NAME.test(first[1])) return null;
  const processes: Record<string, ProcessState> = {};
  for (const [name, state] of rest) {
    if (name === 'network' || Object.hasOwn(processes, name) || !PROCESS_STATES.has(state)) return null;
    processes[name] = state as ProcessState;
  }
  return { network: first[1], processes };
}

/**
 * Builds a signed heartbeat: InstanceHA's HBV2 for `host`, with the host agent's `report` after a NUL
 * in the name field when one is given.
 */
export function encodeHeartbeat(
  host: string,
  key: Buffer,
  sentAt: Date = new Date(),
  report?: HostAgentReport,
): Buffer {
  const header = Buffer.alloc(12);
  header.writeUInt32BE(HEARTBEAT_MAGIC, 0);
  header.writeBigUInt64BE(BigInt(Math.floor(sentAt.getTime() / 1000)), 4);
  const name = report ? `${host}\0${formatHostAgentReport(report)}` : host;
  const body = Buffer.concat([header, Buffer.from(name, 'utf8')]);
  return Buffer.concat([body, createHmac('sha256', key).update(body).digest()]);
}
