import { readdirSync } from 'node:fs';
import { isIP } from 'node:net';
import { hostname } from 'node:os';
import { HEARTBEAT_DEFAULT_PORT, loadHeartbeatKeys, REPORT_NAME } from '@lifeguard/contracts';
import { z } from 'zod';

/** One network the agent sends on: its name, the address it sends from, the monitors it sends to. */
export interface HeartbeatNetwork {
  /** From the variable's name: HEARTBEAT_NETWORK_STORAGE → `storage`. */
  readonly name: string;
  /** The variable that names it (in configuration errors). */
  readonly variable: string;
  /** The local address the network's socket is bound to; null lets the kernel pick. */
  readonly sourceAddress: string | null;
  readonly monitors: ReadonlyArray<{ readonly host: string; readonly port: number }>;
}

export interface HostAgentSettings {
  /** The host's name as Nova names its compute service (HOST_AGENT_HOST, default the hostname). */
  readonly host: string;
  /** Seconds between two heartbeats (HEARTBEAT_INTERVAL). */
  readonly intervalSeconds: number;
  /** The HMAC key the heartbeats are signed with (from HEARTBEAT_HMAC_KEY_PATH). */
  readonly key: Buffer;
  readonly networks: ReadonlyArray<HeartbeatNetwork>;
  /** The processes each heartbeat reports on (HOST_AGENT_WATCHED_PROCESSES). */
  readonly watchedProcesses: ReadonlyArray<string>;
  /** The host's /proc as the agent sees it (HOST_AGENT_PROC_PATH): /host/proc in a container, say. */
  readonly procPath: string;
  /** Where /healthz and /metrics answer (LIFEGUARD_HTTP_HOST, LIFEGUARD_HTTP_PORT; port 0: none). */
  readonly http: { readonly host: string; readonly port: number };
  readonly logLevel: string;
}

/** The host agent's health and metrics port (LIFEGUARD_HTTP_PORT), beside the workers' 9402–9410. */
export const HOST_AGENT_HTTP_PORT = 9405;
/** The prefix of the variables that each name a network and its monitors. */
export const NETWORK_VARIABLE_PREFIX = 'HEARTBEAT_NETWORK_';

/** A configuration key and what is wrong with it. */
export class HostAgentConfigError extends Error {
  constructor(readonly problems: ReadonlyArray<{ key: string; problem: string }>) {
    super(
      `invalid host agent configuration: ${problems.map((each) => `${each.key}: ${each.problem}`).join('; ')}`,
    );
    this.name = 'HostAgentConfigError';
  }
}

const HOST_NAME = /^[a-zA-Z0-9]([a-zA-Z0-9._-]*[a-zA-Z0-9])?$/;

const Environment = z.object({
  HOST_AGENT_HOST: z
    .string()
    .max(64, 'at most 64 characters (InstanceHA reads no more)')
    .regex(HOST_NAME, 'a host name: letters, digits, ".", "_" and "-"')
    .default(() => hostname()),
  HEARTBEAT_INTERVAL: z
    .string()
    .regex(/^\d+(\.\d+)?$/, 'a number of seconds written as digits, e.g. 1 or 2.5')
    .default('1')
    .transform(Number)
    // The packet's time stamp counts whole seconds: a monitor takes one heartbeat per second and network.
    .pipe(z.number().min(1, 'at least 1 s (the time stamp counts whole seconds)').max(60, 'at most 60 s')),
  HEARTBEAT_HMAC_KEY_PATH: z.string('required: the file holding the hex-encoded HMAC key').min(1, 'required'),
  HOST_AGENT_WATCHED_PROCESSES: z
    .string()
    .default('nova-compute,libvirtd')
    .transform((text) =>
      text
        .split(',')
        .map((name) => name.trim())
        .filter(Boolean),
    )
    .pipe(z.array(z.string().regex(REPORT_NAME, 'process names: lower-case letters, digits, ".", "_", "-"'))),
  HOST_AGENT_PROC_PATH: z
    .string()
    .startsWith('/', 'an absolute path, e.g. /proc or /host/proc')
    .default('/proc'),
  LIFEGUARD_HTTP_HOST: z
    .string()
    .refine((text) => isIP(text) !== 0 || text === 'localhost', 'an IP address of this host, or localhost')
    .default('127.0.0.1'),
  LIFEGUARD_HTTP_PORT: z.coerce.number().int().min(0).max(65535).default(HOST_AGENT_HTTP_PORT),
  LIFEGUARD_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

/**
 * The host agent's settings from the environment.
 * @throws HostAgentConfigError naming every bad key: a value out of range, no HEARTBEAT_NETWORK_*
 *   variable, a monitor address that is not `host[:port]`, a key file that cannot be read or is not
 *   hex (never an unsigned heartbeat)
 */
export function loadHostAgentSettings(env: NodeJS.ProcessEnv = process.env): HostAgentSettings {
  const problems: Array<{ key: string; problem: string }> = [];
  const parsed = Environment.safeParse(env);
  if (!parsed.success) {
    for (const issue of parsed.error.issues)
      problems.push({ key: String(issue.path[0]), problem: issue.message });
  }
  const networks = parseNetworks(env, problems);
  const key = parsed.success ? readKey(parsed.data.HEARTBEAT_HMAC_KEY_PATH, problems) : null;
  if (parsed.success) checkProcPath(parsed.data.HOST_AGENT_PROC_PATH, problems);
  if (!parsed.success || key === null || problems.length > 0) throw new HostAgentConfigError(problems);
  const values = parsed.data;
  return {
    host: values.HOST_AGENT_HOST,
    intervalSeconds: values.HEARTBEAT_INTERVAL,
    key,
    networks,
    watchedProcesses: values.HOST_AGENT_WATCHED_PROCESSES,
    procPath: values.HOST_AGENT_PROC_PATH,
    http: { host: values.LIFEGUARD_HTTP_HOST, port: values.LIFEGUARD_HTTP_PORT },
    logLevel: values.LIFEGUARD_LOG_LEVEL,
  };
}

/**
 * The HMAC key from its file (hex, as the node monitors read theirs: loadHeartbeatKeys), 16 bytes at
 * least. Null (with the problem) when the file cannot be read, is empty, is not hex or is too short.
 */
function readKey(path: string, problems: Array<{ key: string; problem: string }>): Buffer | null {
  const key = 'HEARTBEAT_HMAC_KEY_PATH';
  const { keys, problems: unreadable } = loadHeartbeatKeys([path]);
  const [bytes] = keys;
  const problem =
    unreadable[0]?.problem ??
    (bytes === undefined
      ? 'is empty'
      : bytes.length < 16
        ? `holds ${bytes.length} bytes; a key has 16 at least`
        : null);
  if (problem !== null) {
    problems.push({ key, problem: `${path} ${problem}` });
    return null;
  }
  return bytes!;
}

/**
 * Every HEARTBEAT_NETWORK_<NAME> variable: `<monitor>[,<monitor>...][ from <source address>]`, a
 * monitor being `host`, `host:port`, `[v6]` or `[v6]:port` (port 7411 when not given).
 */
export function parseNetworks(
  env: NodeJS.ProcessEnv,
  problems: Array<{ key: string; problem: string }>,
): HeartbeatNetwork[] {
  const networks: HeartbeatNetwork[] = [];
  for (const [variable, value] of Object.entries(env).sort(([a], [b]) => a.localeCompare(b))) {
    if (!variable.startsWith(NETWORK_VARIABLE_PREFIX) || value === undefined) continue;
    const name = variable.slice(NETWORK_VARIABLE_PREFIX.length).toLowerCase().replaceAll('_', '-');
    if (!REPORT_NAME.test(name)) {
      problems.push({
        key: variable,
        problem:
          'the network name after HEARTBEAT_NETWORK_ must be 1 to 40 letters, digits or "_", the first a letter or digit',
      });
      continue;
    }
    const namesake = networks.find((each) => each.name === name);
    if (namesake) {
      problems.push({
        key: variable,
        problem: `names network ${name} again (${namesake.variable} does): one variable per network`,
      });
      continue;
    }
    const [list = '', source, ...extra] = value.split(/\s+from\s+/);
    const monitors = list
      .split(',')
      .map((each) => each.trim())
      .filter(Boolean)
      .map(parseMonitor);
    if (extra.length > 0 || monitors.length === 0 || monitors.some((each) => each === null)) {
      problems.push({
        key: variable,
        problem: `"${value}" is not "<monitor>[,<monitor>...][ from <source address>]" (a monitor: host, host:port or [v6]:port)`,
      });
      continue;
    }
    const sourceAddress = source?.trim() || null;
    const addresses = [sourceAddress, ...monitors.map((each) => each!.host)].filter(
      (each): each is string => each !== null && isIP(each) !== 0,
    );
    if (new Set(addresses.map((each) => isIP(each))).size > 1) {
      problems.push({
        key: variable,
        problem: `"${value}" mixes IPv4 and IPv6 addresses: a network sends from one socket, of one family`,
      });
      continue;
    }
    networks.push({
      name,
      variable,
      sourceAddress,
      monitors: monitors as Array<{ host: string; port: number }>,
    });
  }
  if (networks.length === 0 && !problems.some((each) => each.key.startsWith(NETWORK_VARIABLE_PREFIX))) {
    problems.push({
      key: `${NETWORK_VARIABLE_PREFIX}<NAME>`,
      problem: 'at least one network is needed, e.g. HEARTBEAT_NETWORK_MANAGEMENT=10.0.0.5,10.0.0.6',
    });
  }
  return networks;
}

/** `host`, `host:port`, `[v6]`, `[v6]:port` → host and port (7411 by default); null when not one. */
export function parseMonitor(text: string): { host: string; port: number } | null {
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([^\s:[\]]+))(?::(\d{1,5}))?$/.exec(text);
  if (!match) return null;
  const port = match[3] === undefined ? HEARTBEAT_DEFAULT_PORT : Number(match[3]);
  if (port < 1 || port > 65535) return null;
  return { host: (match[1] ?? match[2])!, port };
}

/**
 * HOST_AGENT_PROC_PATH must be a /proc the agent can list (numbered process folders): without it the
 * agent could not say which watched processes run.
 */
function checkProcPath(path: string, problems: Array<{ key: string; problem: string }>): void {
  let entries: string[];
  try {
    entries = readdirSync(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    problems.push({ key: 'HOST_AGENT_PROC_PATH', problem: `${path} cannot be listed (${code})` });
    return;
  }
  if (!entries.some((entry) => /^\d+$/.test(entry)))
    problems.push({
      key: 'HOST_AGENT_PROC_PATH',
      problem: `${path} holds no process folders: not a /proc (e.g. /proc, or /host/proc in a container)`,
    });
}
