import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import {
  INSTANCE_RESTART_JOB_OPTIONS,
  type InstanceRestartJob,
  instanceRestartJobId,
  JOB_NAMES,
} from '@lifeguard/contracts';
import { exponentialBackoff } from '@lifeguard/runtime';
import type { Queue } from 'bullmq';
import type { Logger } from 'pino';
import { type DomainEvent, parseVirshEventLine } from './virsh-event-line.ts';

const run = promisify(execFile);

export interface InstanceMonitorOptions {
  /** The `virsh` program (default `virsh` on PATH). */
  readonly virsh: string;
  /** The libvirt connection URI (`qemu:///system` on a compute host). */
  readonly uri: string;
  /** The compute host's name as Nova knows it (its nova-compute `host`). */
  readonly host: string;
  /** The `instance-restart` queue. */
  readonly queue: Queue;
  readonly logger: Logger;
  /** Called with each job added (tests, metrics). */
  readonly onJob?: (job: InstanceRestartJob, jobId: string) => void;
}

/**
 * lifeguard's instance monitor on one compute host: runs `virsh event --all --loop --timestamp`
 * against the host's libvirt, and for each domain event in Masakari's instance monitor filter table
 * adds an `instance-restart` job (source `instance-monitor`) for the domain's uuid, which is Nova's
 * server uuid. The instance restart rule then decides, as Masakari's engine would for the same
 * notification. virsh is started again (1 s, doubling, at most 30 s) whenever it ends.
 */
export class InstanceMonitor {
  private child: ChildProcess | null = null;
  private stopped = false;
  private failures = 0;
  private readonly uuids = new Map<string, string>();
  private readyResolve: (() => void) | null = null;

  constructor(private readonly options: InstanceMonitorOptions) {}

  /** Starts watching; resolves once virsh runs. */
  async start(): Promise<void> {
    await this.refreshUuids();
    await this.spawnVirsh();
  }

  private spawnVirsh(): Promise<void> {
    const { options } = this;
    const child = spawn(options.virsh, ['-c', options.uri, 'event', '--all', '--loop', '--timestamp'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    const ready = new Promise<void>((resolve) => {
      this.readyResolve = resolve;
    });
    child.once('spawn', () => this.readyResolve?.());
    child.once('error', (error) => {
      options.logger.error({ err: error, virsh: options.virsh }, 'virsh could not be started');
      this.readyResolve?.();
    });
    createInterface({ input: child.stdout! }).on('line', (line) => void this.onLine(line));
    createInterface({ input: child.stderr! }).on('line', (line) =>
      options.logger.warn({ uri: options.uri, line }, 'virsh'),
    );
    child.once('close', (code, signal) => {
      if (this.stopped) return;
      this.failures += 1;
      const delay = exponentialBackoff(1000, this.failures - 1, 30_000);
      options.logger.warn({ code, signal, delayMilliseconds: delay }, 'virsh event ended; starting it again');
      setTimeout(() => {
        if (!this.stopped) void this.spawnVirsh();
      }, delay).unref();
    });
    return ready;
  }

  private async refreshUuids(): Promise<void> {
    try {
      const { stdout } = await run(this.options.virsh, [
        '-c',
        this.options.uri,
        'list',
        '--all',
        '--uuid',
        '--name',
      ]);
      for (const line of stdout.split('\n')) {
        const match = line.trim().match(/^([0-9a-f-]{36})\s+(.+)$/i);
        if (match) this.uuids.set(match[2]!, match[1]!);
      }
    } catch (error) {
      this.options.logger.warn({ err: error }, 'virsh list failed; domain uuids are looked up one by one');
    }
  }

  private async uuidOf(domain: string): Promise<string | null> {
    if (!this.uuids.has(domain)) await this.refreshUuids();
    if (!this.uuids.has(domain)) {
      try {
        const { stdout } = await run(this.options.virsh, ['-c', this.options.uri, 'domuuid', domain]);
        if (stdout.trim()) this.uuids.set(domain, stdout.trim());
      } catch {
        return null;
      }
    }
    return this.uuids.get(domain) ?? null;
  }

  private async onLine(line: string): Promise<void> {
    const event = parseVirshEventLine(line);
    if (event === null) return;
    this.failures = 0;
    try {
      await this.enqueue(event);
    } catch (error) {
      this.options.logger.error({ err: error, line }, 'could not add the instance-restart job');
    }
  }

  private async enqueue(event: DomainEvent): Promise<void> {
    const { options } = this;
    const instanceId = await this.uuidOf(event.domain);
    if (instanceId === null) {
      options.logger.warn(
        { domain: event.domain },
        'domain event for a domain whose uuid libvirt no longer gives',
      );
      return;
    }
    const job: InstanceRestartJob = {
      instanceId,
      host: options.host,
      failure: { source: 'instance-monitor', event: event.event, virDomainEvent: event.virDomainEvent },
      notificationUuid: null,
      observedAt: (event.at ?? new Date()).toISOString(),
    };
    const jobId = instanceRestartJobId(instanceId, job.observedAt);
    await options.queue.add(JOB_NAMES.instanceRestart, job, { ...INSTANCE_RESTART_JOB_OPTIONS, jobId });
    options.logger.info(
      { jobId, domain: event.domain, ...job.failure },
      'domain event: instance-restart job added',
    );
    options.onJob?.(job, jobId);
  }

  /** Stops virsh; no job is added afterwards. */
  async stop(): Promise<void> {
    this.stopped = true;
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const closed = new Promise((resolve) => child.once('close', resolve));
    child.kill('SIGTERM');
    await closed;
  }
}
