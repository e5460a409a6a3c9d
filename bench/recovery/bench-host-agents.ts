// A lifeguard host agent per compute of the real-Nova harness, for the recovery benchmark's host-agent
// mode: each `lifeguard-host-agent` a process of its own, sending every second on two networks (both on
// loopback here) to the node monitor's heartbeat listener.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lifeguardEntryPoint, withoutNodeOptions } from '@lifeguard/testing';

export class BenchHostAgents {
  private readonly agents = new Map<string, ChildProcess>();
  private readonly directory = mkdtempSync(join(tmpdir(), 'bench-host-agents-'));
  /** The HMAC key file the agents and the node monitor share. */
  readonly keyPath = join(this.directory, 'hmac-key');

  constructor(private readonly heartbeatPort: number) {
    writeFileSync(this.keyPath, 'b7'.repeat(32));
  }

  /** The node monitor's settings that make it hear these agents. */
  nodeMonitorEnvironment(): Record<string, string> {
    return {
      HEARTBEAT_PORT: String(this.heartbeatPort),
      HEARTBEAT_HMAC_KEY_PATH: this.keyPath,
      LIFEGUARD_HEARTBEAT_LISTEN_ADDRESS: '127.0.0.1',
    };
  }

  /** (Re)starts `host`'s agent. */
  start(host: string): void {
    this.kill(host);
    const monitor = `127.0.0.1:${this.heartbeatPort}`;
    const agent = spawn(process.execPath, lifeguardEntryPoint('host-agent'), {
      env: {
        ...withoutNodeOptions(process.env),
        HOST_AGENT_HOST: host,
        HEARTBEAT_HMAC_KEY_PATH: this.keyPath,
        HEARTBEAT_NETWORK_MANAGEMENT: monitor,
        HEARTBEAT_NETWORK_STORAGE: monitor,
        LIFEGUARD_HTTP_PORT: '0',
        LIFEGUARD_LOG_LEVEL: 'warn',
      },
      stdio: 'ignore',
    });
    this.agents.set(host, agent);
  }

  /** SIGKILLs `host`'s agent (with its host). */
  kill(host: string): void {
    this.agents.get(host)?.kill('SIGKILL');
    this.agents.delete(host);
  }

  stop(): void {
    for (const host of [...this.agents.keys()]) this.kill(host);
    rmSync(this.directory, { recursive: true, force: true });
  }
}
