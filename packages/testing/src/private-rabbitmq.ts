import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { waitFor } from './wait-for.ts';

/** Where and how a private RabbitMQ node runs; the same settings start it again on the same data. */
export interface PrivateRabbitmqNode {
  /** Erlang node name, e.g. `lgfaults12345@localhost` (rabbitmqctl's `-n`). */
  readonly nodeName: string;
  /** The node's folder: config, enabled plugins, `mnesia/`, `log/` and `home/` (its Erlang cookie). */
  readonly directory: string;
  /** RABBITMQ_NODE_PORT (the AMQP port when the config names no listener). */
  readonly nodePort: number;
  /** RABBITMQ_DIST_PORT, the Erlang distribution port. */
  readonly distributionPort: number;
  /** `rabbitmq.conf` lines (listeners, TLS, management port, ...). */
  readonly configLines: ReadonlyArray<string>;
  /** Plugins to enable, e.g. `['rabbitmq_management']`; none when empty. */
  readonly plugins: ReadonlyArray<string>;
}

/** The environment rabbitmq-server and rabbitmqctl need to address `node` (and only it). */
export function privateRabbitmqEnvironment(node: PrivateRabbitmqNode): Record<string, string> {
  const path = (name: string) => join(node.directory, name);
  return {
    HOME: path('home'),
    RABBITMQ_NODENAME: node.nodeName,
    RABBITMQ_NODE_PORT: String(node.nodePort),
    RABBITMQ_DIST_PORT: String(node.distributionPort),
    RABBITMQ_CONFIG_FILE: path('rabbitmq.conf'),
    RABBITMQ_MNESIA_BASE: path('mnesia'),
    RABBITMQ_LOG_BASE: path('log'),
    RABBITMQ_ENABLED_PLUGINS_FILE: path('enabled_plugins'),
    RABBITMQ_PID_FILE: path('rabbitmq.pid'),
    RABBITMQ_CONF_ENV_FILE: '/dev/null',
  };
}

/**
 * Starts (or starts again, on the data it left) the RabbitMQ node `node` from Debian's
 * `/usr/lib/rabbitmq/bin/rabbitmq-server`, detached in a process group of its own so that it outlives
 * the calling process and can be stopped by its group id alone. It shares epmd with the machine's node
 * but nothing else: node name, distribution port, config, data, logs and cookie are its own.
 * @param ready resolves true once the node serves what the caller needs (a TLS handshake, the
 *   management API, ...); asked every 100 ms
 * @param onSpawn called with the process group id as soon as the node is spawned, before it is ready
 *   (to record it where a caller that is killed meanwhile can still be cleaned up)
 * @returns the process group id (= the pid of rabbitmq-server), for stopPrivateRabbitmq
 * @throws Error when rabbitmq-server exits or `ready` is not true within `timeoutMilliseconds`
 *   (the node is stopped first)
 */
export async function startPrivateRabbitmq(
  node: PrivateRabbitmqNode,
  ready: () => Promise<boolean>,
  timeoutMilliseconds = 120_000,
  onSpawn: (groupId: number) => void = () => undefined,
): Promise<number> {
  for (const name of ['mnesia', 'log', 'home']) mkdirSync(join(node.directory, name), { recursive: true });
  writeFileSync(join(node.directory, 'enabled_plugins'), `[${node.plugins.join(',')}].\n`);
  writeFileSync(join(node.directory, 'rabbitmq.conf'), `${node.configLines.join('\n')}\n`);
  const child = spawn('/usr/lib/rabbitmq/bin/rabbitmq-server', [], {
    stdio: 'ignore',
    detached: true,
    // Erlang writes erl_crash.dump and Mnesia core files into its working directory: the node's own.
    cwd: node.directory,
    env: { ...process.env, ...privateRabbitmqEnvironment(node) },
  });
  child.unref();
  const pid = child.pid;
  if (pid === undefined) throw new Error(`rabbitmq-server ${node.nodeName} did not start`);
  onSpawn(pid);
  let exited: number | null = null;
  child.once('exit', (code) => {
    exited = code ?? -1;
  });
  const deadline = Date.now() + timeoutMilliseconds;
  for (;;) {
    if (exited !== null) throw new Error(`rabbitmq-server ${node.nodeName} exited with ${exited}`);
    if (await ready().catch(() => false)) break;
    if (Date.now() > deadline) {
      await stopProcessGroup(pid);
      throw new Error(`RabbitMQ node ${node.nodeName} not ready after ${timeoutMilliseconds} ms`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return pid;
}

/**
 * Sends SIGKILL to the process group `groupId` (a node started by startPrivateRabbitmq, or any
 * detached child this code started) and waits until its leader is gone (up to 30 s).
 */
export async function stopProcessGroup(groupId: number): Promise<void> {
  try {
    process.kill(-groupId, 'SIGKILL');
  } catch {
    return;
  }
  await waitFor(
    `process group ${groupId} to end`,
    () => {
      try {
        process.kill(groupId, 0);
        return false;
      } catch {
        return true;
      }
    },
    30_000,
    50,
  );
}
