import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { closedPort } from './redis-server.ts';
import { waitFor } from './wait-for.ts';

const run = promisify(execFile);
const RABBITMQ_BIN = '/usr/lib/rabbitmq/bin';

/** One node of a test's own RabbitMQ cluster. */
export interface ClusterNode {
  /** Erlang node name, `lgc<port>-<index>@localhost`. */
  readonly name: string;
  /** AMQP port on 127.0.0.1. */
  readonly port: number;
  /** True while the process this helper started for the node runs. */
  readonly running: boolean;
}

/** A RabbitMQ cluster of a test's own on 127.0.0.1 (see startRabbitmqCluster). */
export interface RabbitmqCluster {
  readonly nodes: ReadonlyArray<ClusterNode>;
  /**
   * `amqp://guest:guest@127.0.0.1:<port>/<vhost>` of every node, comma-separated, in node order
   * (LIFEGUARD_AMQP_URL's list form).
   */
  url(vhost?: string): string;
  /** Runs `rabbitmqctl -n <node> <args>` with the cluster's Erlang cookie; returns its stdout. */
  rabbitmqctl(node: ClusterNode, ...args: string[]): Promise<string>;
  /** Creates a vhost (on a running node) with every permission for guest. */
  addVhost(vhost: string): Promise<void>;
  /** The node that holds the leader of quorum queue `queue` in `vhost`. */
  quorumLeader(vhost: string, queue: string): Promise<ClusterNode>;
  /** The node the connection named `connectionName` (client property) is open on, or null. */
  connectionNode(vhost: string, connectionName: string): Promise<ClusterNode | null>;
  /** Every named connection open in `vhost`, with the node it is open on (null when not one of these). */
  connections(vhost: string): Promise<Array<{ name: string; node: ClusterNode | null }>>;
  /**
   * Hands the leadership of quorum queue `queue` in `vhost` over to `node` (the Raft handover
   * RabbitMQ's `rabbitmq-queues rebalance` uses) and waits until list_queues names it the leader.
   */
  moveQuorumLeader(vhost: string, queue: string, node: ClusterNode): Promise<void>;
  /**
   * Hands the leadership of every quorum queue of `vhost` over to `node` in one go and waits until
   * list_queues names it the leader of each; returns the queues' names.
   */
  moveQuorumLeaders(vhost: string, node: ClusterNode): Promise<string[]>;
  /** Every quorum queue of `vhost` with the node holding its leader. */
  quorumLeaders(vhost: string): Promise<Array<{ queue: string; leader: ClusterNode | null }>>;
  /** Kills node `node` abruptly (SIGKILL of the process group this helper started). */
  kill(node: ClusterNode): Promise<void>;
  /** Starts a killed node again with its data folder; it rejoins the cluster. */
  restart(node: ClusterNode): Promise<void>;
  /** Stops every node this helper started (SIGKILL of their process groups). */
  stop(): Promise<void>;
}

interface NodeProcess {
  name: string;
  port: number;
  distributionPort: number;
  directory: string;
  child: ChildProcess | null;
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

async function killGroup(child: ChildProcess | null): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  process.kill(-child.pid, 'SIGKILL');
  await exited;
}

/**
 * Starts a RabbitMQ cluster of the test's own: `size` nodes (default 3) on 127.0.0.1, each with its
 * own node name (`lgc<port>-<index>@localhost`), AMQP port, Erlang distribution port and data, log
 * and home folders under `directory`, sharing one Erlang cookie (each node's HOME holds the same
 * `.erlang.cookie`). The nodes start together; every node after the first is then joined to the
 * first with `rabbitmqctl stop_app`, `join_cluster`, `start_app`. Only the processes it started are
 * stopped, by their process group. Nodes share the machine's epmd.
 * @throws Error when a node does not accept AMQP connections within 180 s or a join fails
 */
export async function startRabbitmqCluster(directory: string, size = 3): Promise<RabbitmqCluster> {
  const cookie = randomBytes(20).toString('hex').toUpperCase();
  const nodes = await prepareNodes(directory, size, cookie);
  const rabbitmqctl = async (node: { name: string }, ...args: string[]): Promise<string> => {
    const owner = nodes.find((each) => each.name === node.name) ?? nodes[0]!;
    const { stdout } = await run(join(RABBITMQ_BIN, 'rabbitmqctl'), ['-q', '-n', node.name, ...args], {
      env: nodeEnvironment(owner),
      timeout: 120_000,
    });
    return stdout;
  };
  const views = nodes.map(view);
  const anyRunning = (): ClusterNode => {
    const found = views.find((each) => each.running);
    if (!found) throw new Error('no node of the cluster is running');
    return found;
  };
  const stop = async () => {
    await Promise.all(nodes.map((node) => killGroup(node.child)));
  };

  try {
    await Promise.all(nodes.map(launchNode));
    const first = nodes[0]!;
    for (const node of nodes.slice(1)) {
      await rabbitmqctl(node, 'stop_app');
      await rabbitmqctl(node, 'join_cluster', first.name);
      await rabbitmqctl(node, 'start_app');
    }
  } catch (error) {
    await stop();
    throw error;
  }

  return {
    nodes: views,
    url: (vhost = '') =>
      nodes.map((node) => `amqp://guest:guest@127.0.0.1:${node.port}/${encodeURIComponent(vhost)}`).join(','),
    rabbitmqctl: (node, ...args) => rabbitmqctl(node, ...args),
    async addVhost(vhost) {
      const node = anyRunning();
      await rabbitmqctl(node, 'add_vhost', vhost);
      await rabbitmqctl(node, 'set_permissions', '-p', vhost, 'guest', '.*', '.*', '.*');
    },
    quorumLeader: async (vhost, queue) =>
      quorumLeader(views, await listQueueLeaders(rabbitmqctl, anyRunning(), vhost), queue, vhost),
    connectionNode: async (vhost, connectionName) =>
      connectionNode(views, await listConnections(rabbitmqctl, anyRunning()), vhost, connectionName),
    connections: async (vhost) =>
      namedConnections(views, await listConnections(rabbitmqctl, anyRunning()), vhost),
    moveQuorumLeader: async (vhost, queue, node) => {
      await moveQuorumLeaders(rabbitmqctl, views, anyRunning, vhost, node, queue);
    },
    moveQuorumLeaders: (vhost, node) => moveQuorumLeaders(rabbitmqctl, views, anyRunning, vhost, node),
    quorumLeaders: async (vhost) =>
      quorumLeaders(views, await listQueueLeaders(rabbitmqctl, anyRunning(), vhost)),
    async kill(node) {
      const process = nodes.find((each) => each.name === node.name);
      await killGroup(process?.child ?? null);
    },
    async restart(node) {
      const process = nodes.find((each) => each.name === node.name);
      if (!process) throw new Error(`no node named ${node.name} in this cluster`);
      await killGroup(process.child);
      await launchNode(process);
    },
    stop,
  };
}

/**
 * The nodes' folders under `directory` (`node<index>`: mnesia, log, home with the shared Erlang
 * cookie, no plugins, a rabbitmq.conf listening on 127.0.0.1) and their free AMQP and distribution ports.
 */
async function prepareNodes(directory: string, size: number, cookie: string): Promise<NodeProcess[]> {
  const nodes: NodeProcess[] = [];
  for (let index = 1; index <= size; index++) {
    const port = await closedPort();
    const nodeDirectory = join(directory, `node${index}`);
    for (const name of ['mnesia', 'log', 'home']) mkdirSync(join(nodeDirectory, name), { recursive: true });
    writeFileSync(join(nodeDirectory, 'home', '.erlang.cookie'), cookie);
    chmodSync(join(nodeDirectory, 'home', '.erlang.cookie'), 0o400);
    writeFileSync(join(nodeDirectory, 'enabled_plugins'), '[].\n');
    writeFileSync(
      join(nodeDirectory, 'rabbitmq.conf'),
      [`listeners.tcp.default = 127.0.0.1:${port}`, 'loopback_users = none', ''].join('\n'),
    );
    nodes.push({
      name: `lgc${nodes[0]?.port ?? port}-${index}@localhost`,
      port,
      distributionPort: await closedPort(),
      directory: nodeDirectory,
      child: null,
    });
  }
  return nodes;
}

/** The environment of a node's rabbitmq-server and of rabbitmqctl run for it: its own folders and ports. */
function nodeEnvironment(node: NodeProcess): NodeJS.ProcessEnv {
  return {
    ...process.env,
    HOME: join(node.directory, 'home'),
    RABBITMQ_NODENAME: node.name,
    RABBITMQ_NODE_PORT: String(node.port),
    RABBITMQ_DIST_PORT: String(node.distributionPort),
    RABBITMQ_CONFIG_FILE: join(node.directory, 'rabbitmq.conf'),
    RABBITMQ_MNESIA_BASE: join(node.directory, 'mnesia'),
    RABBITMQ_LOG_BASE: join(node.directory, 'log'),
    RABBITMQ_ENABLED_PLUGINS_FILE: join(node.directory, 'enabled_plugins'),
    RABBITMQ_PID_FILE: join(node.directory, 'rabbitmq.pid'),
    RABBITMQ_CONF_ENV_FILE: '/dev/null',
  };
}

/**
 * Starts the node's rabbitmq-server in its own process group and waits until it accepts AMQP connections.
 * @throws Error when it exits first, or does not accept within 180 s
 */
async function launchNode(node: NodeProcess): Promise<void> {
  node.child = spawn(join(RABBITMQ_BIN, 'rabbitmq-server'), [], {
    stdio: 'ignore',
    detached: true,
    // Erlang writes erl_crash.dump and Mnesia core files into its working directory: the node's own.
    cwd: node.directory,
    env: nodeEnvironment(node),
  });
  const child = node.child;
  await waitFor(
    `RabbitMQ node ${node.name} on port ${node.port}`,
    async () => {
      if (child.exitCode !== null) throw new Error(`${node.name} exited with ${child.exitCode}`);
      return accepts(node.port);
    },
    180_000,
  );
}

/** What a test sees of a node: name, port, and whether its process runs (read when asked). */
function view(node: NodeProcess): ClusterNode {
  return {
    name: node.name,
    port: node.port,
    get running() {
      return node.child !== null && node.child.exitCode === null && node.child.signalCode === null;
    },
  };
}

type Rabbitmqctl = (node: { name: string }, ...args: string[]) => Promise<string>;

/** `rabbitmqctl list_queues name leader type` of `vhost`, without headers. */
function listQueueLeaders(rabbitmqctl: Rabbitmqctl, node: ClusterNode, vhost: string): Promise<string> {
  return rabbitmqctl(node, 'list_queues', '-p', vhost, '--no-table-headers', 'name', 'leader', 'type');
}

/** The quorum queues in list_queues' output (name, leader, type) and the node of each one's leader. */
function quorumLeaders(
  views: ReadonlyArray<ClusterNode>,
  output: string,
): Array<{ queue: string; leader: ClusterNode | null }> {
  const found: Array<{ queue: string; leader: ClusterNode | null }> = [];
  for (const line of output.split('\n')) {
    const [queue, leader, type] = line.trim().split('\t');
    if (!queue || type?.trim() !== 'quorum') continue;
    found.push({ queue, leader: views.find((each) => each.name === leader?.trim()) ?? null });
  }
  return found;
}

/**
 * Hands the leadership of the quorum queues of `vhost` (every one, or only `queue`) over to `target`
 * with one `rabbitmqctl eval` (rabbit_quorum_queue:transfer_leadership for each), then waits until
 * list_queues names `target` the leader of each. Returns the queues' names.
 */
async function moveQuorumLeaders(
  rabbitmqctl: Rabbitmqctl,
  views: ReadonlyArray<ClusterNode>,
  anyRunning: () => ClusterNode,
  vhost: string,
  target: ClusterNode,
  queue: string | null = null,
): Promise<string[]> {
  const onlyQueue =
    queue === null ? '' : `, amqqueue:get_name(Q) =:= rabbit_misc:r(<<"${vhost}">>, queue, <<"${queue}">>)`;
  await rabbitmqctl(
    anyRunning(),
    'eval',
    `[rabbit_quorum_queue:transfer_leadership(Q, '${target.name}') || Q <- rabbit_amqqueue:list(<<"${vhost}">>), amqqueue:get_type(Q) =:= rabbit_quorum_queue${onlyQueue}].`,
  );
  const moved = await waitFor(
    `${target.name} to lead ${queue === null ? `every quorum queue of ${vhost}` : `quorum queue ${queue}`}`,
    async () => {
      const leaders = quorumLeaders(views, await listQueueLeaders(rabbitmqctl, anyRunning(), vhost)).filter(
        (each) => queue === null || each.queue === queue,
      );
      return leaders.length > 0 && leaders.every((each) => each.leader?.name === target.name) && leaders;
    },
    30_000,
    250,
  );
  return moved.map((each) => each.queue);
}

/** `rabbitmqctl list_connections vhost port client_properties`, without headers. */
function listConnections(rabbitmqctl: Rabbitmqctl, node: ClusterNode): Promise<string> {
  return rabbitmqctl(node, 'list_connections', '--no-table-headers', 'vhost', 'port', 'client_properties');
}

/**
 * The node listed as the leader of `queue` in list_queues' output.
 * @throws Error when the queue has no leader listed, or the leader is not a node of this cluster
 */
function quorumLeader(
  views: ReadonlyArray<ClusterNode>,
  output: string,
  queue: string,
  vhost: string,
): ClusterNode {
  for (const line of output.split('\n')) {
    const [name, leader] = line.trim().split('\t');
    if (name === queue && leader) {
      const found = views.find((each) => each.name === leader.trim());
      if (!found) throw new Error(`no node named ${leader.trim()} in this cluster`);
      return found;
    }
  }
  throw new Error(`queue ${queue} in vhost ${vhost} has no leader listed:\n${output}`);
}

/** The node the connection named `connectionName` in `vhost` came in on (by its AMQP port), or null. */
function connectionNode(
  views: ReadonlyArray<ClusterNode>,
  output: string,
  vhost: string,
  connectionName: string,
): ClusterNode | null {
  return namedConnections(views, output, vhost).find((each) => each.name === connectionName)?.node ?? null;
}

/** The named connections of `vhost` in list_connections' output and the node each came in on. */
function namedConnections(
  views: ReadonlyArray<ClusterNode>,
  output: string,
  vhost: string,
): Array<{ name: string; node: ClusterNode | null }> {
  const found: Array<{ name: string; node: ClusterNode | null }> = [];
  // `port` is the node's own AMQP port the connection came in on.
  for (const line of output.split('\n')) {
    const [connectionVhost, port] = line.split('\t');
    const name = /\{"connection_name","([^"]*)"\}/.exec(line)?.[1];
    if (connectionVhost !== vhost || name === undefined) continue;
    found.push({ name, node: views.find((each) => String(each.port) === port?.trim()) ?? null });
  }
  return found;
}
