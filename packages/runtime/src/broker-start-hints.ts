import { readFileSync } from 'node:fs';

/** How an operator starts one broker on this machine: systemd, without systemd, Docker Compose. */
export interface BrokerStartHint {
  /** The systemd unit Debian's package installs (`sudo systemctl start <unit>`). */
  readonly systemdService: string;
  /** The command for a machine without systemd, with who must run it. */
  readonly withoutSystemd: string;
  /** The service name in the repository's docker-compose.yml. */
  readonly composeService: string;
  /** The variable that points lifeguard at a broker elsewhere. */
  readonly urlVariable: string;
}

export type BrokerName = 'RabbitMQ' | 'Redis';

/**
 * The start hints, from `packages/runtime/broker-start-hints.json`: one file, read also by
 * `npm start`'s first check and the test runner's prerequisites (plain scripts that run before any
 * package is built), so the launcher, every worker, the CLI and the test runner say the same thing.
 */
export const BROKER_START_HINTS: Readonly<Record<BrokerName, BrokerStartHint>> = JSON.parse(
  readFileSync(new URL('../broker-start-hints.json', import.meta.url), 'utf8'),
);

/** `sudo systemctl start rabbitmq-server (without systemd, as root: rabbitmq-server -detached)`. */
export function brokerStartCommand(broker: BrokerName): string {
  const hint = BROKER_START_HINTS[broker];
  return `sudo systemctl start ${hint.systemdService} (without systemd, ${hint.withoutSystemd})`;
}

/**
 * The one-line hint a worker or the CLI gives when `broker` cannot be reached at all: "Start it:
 * sudo systemctl start … (without systemd, …), or `docker compose up -d …` in this checkout, or
 * point LIFEGUARD_…_URL at a running …".
 */
export function brokerStartHint(broker: BrokerName): string {
  const hint = BROKER_START_HINTS[broker];
  return (
    `Start it: ${brokerStartCommand(broker)}, or \`docker compose up -d ${hint.composeService}\` in this ` +
    `checkout, or point ${hint.urlVariable} at a running ${broker}.`
  );
}
