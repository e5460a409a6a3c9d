import { type ChildProcess, spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';

const SCRIPT = resolve(import.meta.dirname, 'neutron_agent.py');

/** One answer of the agent: the RPC's result, or the exception it raised. */
export type AgentAnswer =
  | { op: string; ok: true; result: unknown }
  | { op: string; ok: false; error: string; message: string };

/**
 * Neutron's DHCP and Open vSwitch agents' RPC side, run by Debian's Python with Neutron's own client
 * classes (support/neutron_agent.py) over oslo.messaging and RabbitMQ. Each method sends one real RPC
 * call and resolves with what the server answered.
 */
export class NeutronAgent {
  private readonly answers: AgentAnswer[] = [];
  private readonly waiting: Array<(answer: AgentAnswer | null) => void> = [];
  private readonly stderr: string[] = [];

  private constructor(private readonly child: ChildProcess) {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const answer = JSON.parse(line) as AgentAnswer;
      const next = this.waiting.shift();
      if (next) next(answer);
      else this.answers.push(answer);
    });
    child.stderr!.on('data', (chunk: Buffer) => this.stderr.push(chunk.toString('utf8')));
    child.once('exit', (code, signal) => {
      this.exit = `exited (${code ?? signal}): ${this.stderr.join('').trim()}`;
      for (const waiter of this.waiting.splice(0)) waiter(null);
    });
  }

  private exit: string | null = null;

  /** Starts the agent on an AMQP URL (`amqp://user:password@host:port/vhost`). */
  static start(amqpUrl: string): NeutronAgent {
    const url = new URL(amqpUrl);
    url.protocol = 'rabbit:';
    const child = spawn('/usr/bin/python3', [SCRIPT, url.toString()], { stdio: ['pipe', 'pipe', 'pipe'] });
    return new NeutronAgent(child);
  }

  private send(command: Record<string, unknown>, timeoutMilliseconds = 60_000): Promise<AgentAnswer> {
    return new Promise((resolveAnswer, reject) => {
      const timer = setTimeout(
        () =>
          reject(
            new Error(`no answer to ${command.op} in ${timeoutMilliseconds} ms: ${this.stderr.join('')}`),
          ),
        timeoutMilliseconds,
      );
      const done = (answer: AgentAnswer | null) => {
        clearTimeout(timer);
        if (answer === null) reject(new Error(`the Neutron agent ${this.exit}`));
        else resolveAnswer(answer);
      };
      if (this.exit !== null) return done(null);
      const ready = this.answers.shift();
      if (ready) done(ready);
      else this.waiting.push(done);
      this.child.stdin!.write(`${JSON.stringify(command)}\n`);
    });
  }

  /** `report_state` (call) as the DHCP agent or the Open vSwitch agent on `host`. */
  reportState(agent: 'dhcp' | 'ovs', host: string): Promise<AgentAnswer> {
    return this.send({ op: 'report_state', agent, host });
  }

  /** The DHCP agent on `host`: `dhcp_ready_on_ports(port_ids)`. */
  dhcpReady(host: string, ports: ReadonlyArray<string>): Promise<AgentAnswer> {
    return this.send({ op: 'dhcp_ready', host, ports });
  }

  /** The Open vSwitch agent on `host`: `update_device_list(devices_up=ports, devices_down=[])`. */
  devicesUp(host: string, ports: ReadonlyArray<string>): Promise<AgentAnswer> {
    return this.send({ op: 'device_up', host, ports });
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((done) => this.child.once('exit', done));
    this.child.stdin!.end(`${JSON.stringify({ op: 'exit' })}\n`);
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }
}
