import { type InstanceHaConfig, loadInstanceHaConfig } from '@lifeguard/instance-ha';
import type { Registry } from 'prom-client';
import { Counter, Gauge } from 'prom-client';
import type { ConsoleConfig } from './config.ts';
import type { ConsoleConnections } from './connections.ts';
import type { EventFeed } from './live/event-feed.ts';
import type { DeadLetterCache } from './readers/dead-letter-cache.ts';
import type { Seen } from './readers/seen.ts';

/** The console's own metrics (on top of the default process metrics). */
export interface ConsoleMetrics {
  /** Write actions by action and outcome (`done`, `refused`, `unauthorised`, `failed`). */
  readonly actions: Counter<'action' | 'outcome'>;
  /** Browsers following `/events`. */
  readonly liveClients: Gauge;
  /** 1 while the console follows the events exchange, 0 while RabbitMQ cannot be reached. */
  readonly feedConnected: Gauge;
}

export function createConsoleMetrics(registry: Registry): ConsoleMetrics {
  return {
    actions: new Counter({
      name: 'lifeguard_console_write_actions_total',
      help: 'Write actions asked of the console, by action and outcome',
      labelNames: ['action', 'outcome'],
      registers: [registry],
    }),
    liveClients: new Gauge({
      name: 'lifeguard_console_live_clients',
      help: 'Browsers following the live event stream',
      registers: [registry],
    }),
    feedConnected: new Gauge({
      name: 'lifeguard_console_event_feed_connected',
      help: '1 while the console follows the events exchange',
      registers: [registry],
    }),
  };
}

/** What every route of the console needs. */
export interface ConsoleState {
  readonly config: ConsoleConfig;
  readonly env: NodeJS.ProcessEnv;
  readonly connections: ConsoleConnections;
  readonly feed: EventFeed;
  readonly registry: Registry;
  readonly metrics: ConsoleMetrics;
  /** The dead letters as last read (read only on page loads, and when the queue changed). */
  readonly deadLetters: DeadLetterCache;
  /** True when write actions are possible (LIFEGUARD_CONSOLE_OPERATOR_TOKEN is set). */
  readonly writable: boolean;
  /** InstanceHA's configuration as the node monitor reads it (re-read for every page). */
  instanceHa(): Seen<InstanceHaConfig>;
}

/**
 * InstanceHA's configuration (INSTANCEHA_CONFIG_PATH and the key overrides of the environment), or
 * why it cannot be read: the console still shows everything else.
 */
export function readInstanceHaConfig(env: NodeJS.ProcessEnv): Seen<InstanceHaConfig> {
  try {
    return { ok: true, value: loadInstanceHaConfig({ env }).config };
  } catch (error) {
    return {
      ok: false,
      source: 'InstanceHA configuration',
      reason: error instanceof Error ? error.message : String(error),
    };
  }
}
