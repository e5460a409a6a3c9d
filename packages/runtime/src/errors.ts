/** One invalid configuration value: its key, where it came from, and what is wrong with it. */
export interface ConfigProblem {
  /** The key as the operator writes it: `LIFEGUARD_REDIS_URL`, `POLL`, `FencingConfig.compute-1.ipaddr`. */
  readonly key: string;
  /** Where the value came from: `environment`, a file path, or `default`. */
  readonly source: string;
  readonly problem: string;
  /** The offending value as text (secrets masked), or null when the key was missing. */
  readonly value: string | null;
}

/** The key of a problem with a whole file (unreadable, not YAML, not found): the text names only the file. */
export const WHOLE_FILE_KEY = '(file)';

/**
 * One problem as text: `POLL (/etc/config.yaml): out of range…; got "5"`, or, for a problem with a
 * whole file (WHOLE_FILE_KEY), `/etc/config.yaml: not valid YAML…`.
 */
export function describeConfigProblem(problem: ConfigProblem): string {
  const where = problem.key === WHOLE_FILE_KEY ? problem.source : `${problem.key} (${problem.source})`;
  return `${where}: ${problem.problem}${problem.value === null ? '' : `; got ${problem.value}`}`;
}

/**
 * Invalid configuration. Start-up stops with this error; its message names every bad key, its source
 * and the problem, e.g. `invalid configuration: LIFEGUARD_HTTP_PORT (environment): must be at most 65535; got "70000"`.
 */
export class ConfigError extends Error {
  readonly problems: ReadonlyArray<ConfigProblem>;

  constructor(problems: ReadonlyArray<ConfigProblem>) {
    super(`invalid configuration: ${problems.map(describeConfigProblem).join('; ')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

/** A message could not be published: the broker returned it as unroutable (mandatory flag). */
export class UnroutableMessageError extends Error {
  constructor(
    readonly exchange: string,
    readonly routingKey: string,
  ) {
    super(
      `message to exchange "${exchange}" with routing key "${routingKey}" was returned: no queue is bound`,
    );
    this.name = 'UnroutableMessageError';
  }
}

/** The broker did not confirm a publish (nack, or the channel closed before the confirm). */
export class PublishNotConfirmedError extends Error {
  constructor(
    readonly exchange: string,
    readonly routingKey: string,
    cause: unknown,
  ) {
    super(
      `publish to exchange "${exchange}" (${routingKey}) was not confirmed: ${String((cause as Error)?.message ?? cause)}`,
      {
        cause,
      },
    );
    this.name = 'PublishNotConfirmedError';
  }
}

/**
 * Thrown by a message handler for input that can never succeed (unknown resource, a rule the
 * message breaks). The consumer dead-letters the message with this reason instead of retrying it.
 */
export class RejectedMessageError extends Error {
  constructor(reason: string, options?: { cause?: unknown }) {
    super(reason, options);
    this.name = 'RejectedMessageError';
  }
}

/** A broker (RabbitMQ or Redis) could not be reached at start-up. */
export class BrokerUnreachableError extends Error {
  constructor(
    readonly broker: 'RabbitMQ' | 'Redis',
    readonly address: string,
    readonly hint: string,
    cause: unknown,
  ) {
    super(
      `${broker} is not reachable at ${address}: ${String((cause as Error)?.message ?? cause)}. ${hint}`,
      { cause },
    );
    this.name = 'BrokerUnreachableError';
  }
}

/** Shutdown did not finish within its time budget. */
export class ShutdownTimeoutError extends Error {
  constructor(
    readonly step: string,
    readonly timeoutSeconds: number,
  ) {
    super(`shutdown step "${step}" did not finish within ${timeoutSeconds} s`);
    this.name = 'ShutdownTimeoutError';
  }
}
