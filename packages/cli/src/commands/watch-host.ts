import type { LifeguardEvent } from '@lifeguard/contracts';
import type { CliContext } from '../cli-context.ts';
import { CliError } from '../errors.ts';
import { formatOffset } from '../output/format.ts';
import { summariseEvent } from './incidents.ts';

/** Events after which a killed host's recovery has nothing more to show. */
const RECOVERY_ENDS = new Set(['host.evacuated', 'host.evacuation.failed']);

function concernsHost(event: LifeguardEvent, host: string): boolean {
  const data = event.data as { host?: string; hosts?: string[] };
  return data.host === host || (Array.isArray(data.hosts) && data.hosts.includes(host));
}

/**
 * Follows lifeguard's handling of `host` from `since` on, printing each event about it (`+12.345 s
 * host.fenced proof=... method=...`) as progress, until `done(event)` says the story is over.
 * Polls the Redis event journal twice a second.
 * @throws CliError when `timeoutSeconds` pass first (lifeguard may still be working)
 */
export async function watchHostEvents(
  cli: CliContext,
  options: {
    host: string;
    since: Date;
    timeoutSeconds: number;
    waitingFor: string;
    done: (event: LifeguardEvent) => boolean;
  },
): Promise<LifeguardEvent[]> {
  const journal = await cli.journal();
  const progress = cli.progress();
  const seen = new Set<string>();
  const shown: LifeguardEvent[] = [];
  const deadline = options.since.getTime() + options.timeoutSeconds * 1000;
  progress.start(options.waitingFor);
  for (;;) {
    const events = (await journal.recent(500)).filter(
      (event) =>
        !seen.has(event.id) &&
        Date.parse(event.occurredAt) >= options.since.getTime() - 1000 &&
        concernsHost(event, options.host),
    );
    for (const event of events) {
      seen.add(event.id);
      shown.push(event);
      const line = `${formatOffset(Date.parse(event.occurredAt) - options.since.getTime())}  ${event.type}  ${summariseEvent(event)}`;
      const warning = event.type.endsWith('.failed') || event.type === 'threshold.exceeded';
      if (options.done(event)) {
        progress.stop();
        progress.line(warning ? 'warn' : 'succeed', line);
        return shown;
      }
      progress.line(warning ? 'warn' : 'succeed', line);
    }
    if (Date.now() > deadline) {
      progress.fail(`no end after ${options.timeoutSeconds} s`);
      throw new CliError(`stopped watching ${options.host} after ${options.timeoutSeconds} s`, [
        'lifeguard may still be working on it: see `lifeguard incidents` and `lifeguard hosts`',
      ]);
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** The end of a killed host's story: evacuated, evacuation failed, or fencing failed for good. */
export function recoveryEnded(event: LifeguardEvent): boolean {
  if (RECOVERY_ENDS.has(event.type)) return true;
  return event.type === 'host.fencing.failed' && event.data.recoverable === false;
}

/** The end of a revived host's story: it was re-enabled. */
export function reenableEnded(event: LifeguardEvent): boolean {
  return event.type === 'host.reenabled';
}
