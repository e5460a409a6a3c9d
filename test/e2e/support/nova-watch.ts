import type { NovaServer, NovaService, realNova } from './real-nova.ts';

/** One look at Nova: when it was taken, the compute services and the watched servers. */
export interface NovaSample {
  /** Milliseconds since the epoch, when the answers arrived. */
  readonly at: number;
  readonly services: ReadonlyArray<NovaService>;
  readonly servers: ReadonlyArray<NovaServer>;
}

/**
 * Looks at real Nova every `intervalMilliseconds` (GET /os-services and GET /servers/detail), as an
 * operator watching the API would, and keeps every sample — the cloud's side of a timeline, measured
 * independently of what lifeguard reports. Times are at most one interval (plus a request) late.
 */
export class NovaWatch {
  readonly samples: NovaSample[] = [];
  private running = true;
  private readonly loop: Promise<void>;

  constructor(
    private readonly nova: ReturnType<typeof realNova>,
    private readonly intervalMilliseconds = 100,
  ) {
    this.loop = this.run();
  }

  private async run(): Promise<void> {
    while (this.running) {
      const began = Date.now();
      try {
        const [services, servers] = await Promise.all([
          this.nova.services(),
          this.nova
            .nova('GET', '/servers/detail?all_tenants=1')
            .then((answer) => (answer.body.servers ?? []) as NovaServer[]),
        ]);
        this.samples.push({ at: Date.now(), services, servers });
      } catch {
        // a failed look is simply missing from the record
      }
      const rest = this.intervalMilliseconds - (Date.now() - began);
      if (rest > 0) await new Promise((resolve) => setTimeout(resolve, rest));
    }
  }

  /** The time of the first sample at or after `since` that satisfies `predicate`, or null. */
  first(predicate: (sample: NovaSample) => boolean, since = 0): number | null {
    return this.samples.find((sample) => sample.at >= since && predicate(sample))?.at ?? null;
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
  }
}

/** True when every server of `ids` is ACTIVE, with no task, on a host other than `source`. */
export function allActiveElsewhere(sample: NovaSample, ids: ReadonlyArray<string>, source: string): boolean {
  return ids.every((id) => {
    const server = sample.servers.find((each) => each.id === id);
    return (
      server !== undefined &&
      server.status === 'ACTIVE' &&
      server['OS-EXT-STS:task_state'] === null &&
      server['OS-EXT-SRV-ATTR:host'] !== null &&
      server['OS-EXT-SRV-ATTR:host'] !== source
    );
  });
}
