import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { startTcpProxy, type TcpProxy } from './tcp-proxy.ts';

/** One simulated machine: a network namespace joined to the test's bridge by a veth pair. */
export interface SimulatedMachine {
  /** The namespace name, `lg-<random>-<n>`. */
  readonly namespace: string;
  /** The machine's address on the bridge's /24. */
  readonly address: string;
  /** The veth end on the root side (in the bridge): taking it down cuts the machine off. */
  readonly rootSideLink: string;
  /** The machine's address on each network (the first is `address`), with `networks` > 1. */
  readonly addresses: ReadonlyArray<string>;
  /** The root-side veth end on each network (the first is `rootSideLink`). */
  readonly rootSideLinks: ReadonlyArray<string>;
  /** The command line that runs `command` inside the namespace, in place (no extra process). */
  commandInside(command: string, args: ReadonlyArray<string>): { command: string; args: string[] };
}

export interface NetworkNamespaces {
  /** The root namespace's address on the bridge (`10.<a>.<b>.1`): where machines reach services. */
  readonly bridgeAddress: string;
  /** The root namespace's address on each network's bridge (the first is `bridgeAddress`). */
  readonly bridgeAddresses: ReadonlyArray<string>;
  /** The /24 the test picked, e.g. `10.213.7.0/24`. */
  readonly subnet: string;
  readonly machines: ReadonlyArray<SimulatedMachine>;
  /**
   * Cuts a machine off: its root-side veth goes down (packets are dropped, no reset is sent); on
   * every network, or on network number `network` (0 is the first) only.
   */
  cut(machine: SimulatedMachine, network?: number): void;
  /** Brings a cut machine's link up again (every network's, or network `network`'s). */
  heal(machine: SimulatedMachine, network?: number): void;
  /**
   * Makes a service listening on 127.0.0.1:`port` in the root namespace reachable from the machines
   * at `bridgeAddress`:`port` (a TcpProxy in this process; the shared Redis and RabbitMQ bind
   * 127.0.0.1 only).
   */
  expose(port: number): Promise<TcpProxy>;
  /** Deletes the veth pairs, the namespaces, the bridge and the proxies: none is left when it returns. Idempotent. */
  remove(): Promise<void>;
}

// argv: namespace, command, arguments. Joins the namespace (CLONE_NEWNET) and execs the command.
const ENTER_AND_EXEC = `
import ctypes, os, sys
descriptor = os.open('/run/netns/' + sys.argv[1], os.O_RDONLY)
if ctypes.CDLL(None, use_errno=True).setns(descriptor, 0x40000000) != 0:
    sys.exit('setns: ' + os.strerror(ctypes.get_errno()))
os.close(descriptor)
os.execvp(sys.argv[2], sys.argv[2:])
`;

function ip(...args: string[]): string {
  return execFileSync('ip', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/**
 * Why network namespaces cannot be made here (not root, no `ip`, no permission), or null when a
 * namespace could be added and deleted.
 */
export function networkNamespacesUnavailable(): string | null {
  const probe = `lg-probe-${randomBytes(3).toString('hex')}`;
  try {
    ip('netns', 'add', probe);
    ip('netns', 'delete', probe);
    return null;
  } catch (error) {
    return `ip netns add failed: ${(error as Error).message.split('\n')[0]}`;
  }
}

/** A /24 in 10.0.0.0/8 that no interface of the root namespace has an address in, nor `taken`. */
function freeSubnet(taken: ReadonlyArray<string> = []): [number, number] {
  const inUse = ip('-o', '-4', 'addr', 'show');
  for (let attempt = 0; attempt < 50; attempt++) {
    const a = 100 + (randomBytes(1)[0]! % 150);
    const b = randomBytes(1)[0]!;
    if (!inUse.includes(` 10.${a}.${b}.`) && !taken.includes(`${a}.${b}`)) return [a, b];
  }
  throw new Error('no free 10.x.y.0/24 found for the test network');
}

/** One network of the machines: its bridge and its /24. */
interface Network {
  readonly bridge: string;
  readonly a: number;
  readonly b: number;
}

/**
 * Creates `count` simulated machines for a test (run as root): namespaces `lg-<random>-<n>`, each with
 * a veth pair per network whose root end is in that network's bridge `lgb<random>[<k>]` holding
 * `10.<a>.<b>.1/24`, the machine's end holding `10.<a>.<b>.<n+1>/24`, loopback up. `networks` (default 1)
 * gives each machine that many networks, each on a /24 of its own (a management and a storage
 * network). Everything made is removed by `remove()`, and on a failure half way through before the
 * error is thrown; an exit of the test process removes it too.
 * @throws Error with `ip`'s message when a step fails (not root, no netns support)
 */
export async function createNetworkNamespaces(
  count: number,
  options: { networks?: number } = {},
): Promise<NetworkNamespaces> {
  const tag = randomBytes(3).toString('hex');
  const networks: Network[] = [];
  const machines: SimulatedMachine[] = [];
  const proxies: TcpProxy[] = [];
  const made: MadeForMachines = { namespaces: [], rootSideLinks: [], bridges: [] };
  let removed = false;
  const removeSync = () => {
    if (removed) return;
    removed = true;
    // A veth pair goes with the namespace holding one end, but the kernel tears a namespace down
    // in the background: deleting the root ends first removes both ends before this returns.
    for (const link of [...made.rootSideLinks, ...made.namespaces, ...made.bridges]) {
      try {
        if (made.namespaces.includes(link)) ip('netns', 'delete', link);
        else ip('link', 'delete', link);
      } catch {
        // already gone
      }
    }
  };
  process.once('exit', removeSync);
  try {
    for (let index = 0; index < (options.networks ?? 1); index++) {
      const [a, b] = freeSubnet(networks.map((each) => `${each.a}.${each.b}`));
      const bridge = index === 0 ? `lgb${tag}` : `lgb${tag}${index}`;
      ip('link', 'add', bridge, 'type', 'bridge');
      made.bridges.push(bridge);
      ip('addr', 'add', `10.${a}.${b}.1/24`, 'dev', bridge);
      ip('link', 'set', bridge, 'up');
      networks.push({ bridge, a, b });
    }
    for (let number = 1; number <= count; number++) machines.push(addMachine(tag, networks, number, made));
  } catch (error) {
    removeSync();
    process.off('exit', removeSync);
    throw error;
  }
  const bridgeAddresses = networks.map(({ a, b }) => `10.${a}.${b}.1`);
  const links = (machine: SimulatedMachine, network?: number) =>
    network === undefined ? machine.rootSideLinks : [machine.rootSideLinks[network]!];
  return {
    bridgeAddress: bridgeAddresses[0]!,
    bridgeAddresses,
    subnet: `10.${networks[0]!.a}.${networks[0]!.b}.0/24`,
    machines,
    cut: (machine, network) => {
      for (const link of links(machine, network)) ip('link', 'set', link, 'down');
    },
    heal: (machine, network) => {
      for (const link of links(machine, network)) ip('link', 'set', link, 'up');
    },
    async expose(port) {
      const proxy = await startTcpProxy({
        listenHost: bridgeAddresses[0]!,
        listenPort: port,
        targetPort: port,
      });
      proxies.push(proxy);
      return proxy;
    },
    async remove() {
      await Promise.all(proxies.splice(0).map((proxy) => proxy.stop()));
      removeSync();
      process.off('exit', removeSync);
    },
  };
}

/** What the machines of a network are made of, each name recorded as soon as it exists (for the clean-up). */
interface MadeForMachines {
  readonly namespaces: string[];
  readonly rootSideLinks: string[];
  readonly bridges: string[];
}

/**
 * Machine `number`: namespace `lg-<tag>-<number>` (recorded in `made` as soon as it exists, as is
 * each veth pair's root end), on each network a veth pair whose root end is in the network's bridge,
 * address `10.<a>.<b>.<number+1>/24`; loopback up.
 */
function addMachine(
  tag: string,
  networks: ReadonlyArray<Network>,
  number: number,
  made: MadeForMachines,
): SimulatedMachine {
  const namespace = `lg-${tag}-${number}`;
  ip('netns', 'add', namespace);
  made.namespaces.push(namespace);
  const addresses: string[] = [];
  const rootSideLinks: string[] = [];
  for (const [index, { bridge, a, b }] of networks.entries()) {
    const suffix = index === 0 ? `${number}` : `${number}n${index}`;
    const rootSideLink = `lgv${tag}r${suffix}`;
    const machineLink = `lgv${tag}m${suffix}`;
    const address = `10.${a}.${b}.${number + 1}`;
    ip('link', 'add', rootSideLink, 'type', 'veth', 'peer', 'name', machineLink);
    made.rootSideLinks.push(rootSideLink);
    ip('link', 'set', machineLink, 'netns', namespace);
    ip('link', 'set', rootSideLink, 'master', bridge);
    ip('link', 'set', rootSideLink, 'up');
    ip('-n', namespace, 'addr', 'add', `${address}/24`, 'dev', machineLink);
    ip('-n', namespace, 'link', 'set', machineLink, 'up');
    addresses.push(address);
    rootSideLinks.push(rootSideLink);
  }
  ip('-n', namespace, 'link', 'set', 'lo', 'up');
  return {
    namespace,
    address: addresses[0]!,
    addresses,
    rootSideLink: rootSideLinks[0]!,
    rootSideLinks,
    // setns(2) then exec in place (`ip netns exec` and nsenter fork first): the process started
    // is the command itself, so its pid is the one to stop and its parent is the test (stack
    // workers stop themselves when their parent is gone).
    commandInside: (command, args) => ({
      command: 'python3',
      args: ['-c', ENTER_AND_EXEC, namespace, command, ...args],
    }),
  };
}
