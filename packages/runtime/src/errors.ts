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

  /** @param message replaces the generated `invalid configuration: ...` text (subclasses that say more) */
  constructor(problems: ReadonlyArray<ConfigProblem>, message?: string) {
    super(message ?? `invalid configuration: ${problems.map(describeConfigProblem).join('; ')}`);
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

/** The text of a connection failure's cause, without a trailing period (the message adds its own). */
function causeText(cause: unknown): string {
  const text = cause instanceof Error ? cause.message || cause.name : String(cause);
  return text.replace(/\.+$/, '');
}

/**
 * A broker (RabbitMQ or Redis) could not be reached at start-up: the connection was refused, timed
 * out or the name did not resolve. The message names the address (password masked), the cause
 * (`connect ECONNREFUSED 127.0.0.1:6379`) and `hint` (how to start it).
 */
export class BrokerUnreachableError extends Error {
  constructor(
    readonly broker: 'RabbitMQ' | 'Redis',
    readonly address: string,
    readonly hint: string,
    cause: unknown,
  ) {
    super(`${broker} is not reachable at ${address}: ${causeText(cause)}. ${hint}`, { cause });
    this.name = 'BrokerUnreachableError';
  }
}

/**
 * A broker answered but refused what its URL asks for: RabbitMQ the user name and password
 * (ACCESS_REFUSED) or the virtual host (NOT_ALLOWED), Redis the password or the database index.
 * Starting the broker does not help, so this is a ConfigError naming the variable (`key`), with the
 * message `<broker> at <address> refused <what> in <key>: <the broker's answer>. <what to do>`.
 */
export class BrokerRefusedError extends ConfigError {
  constructor(
    readonly broker: 'RabbitMQ' | 'Redis',
    /** The URL, password masked, or `sentinels host:port,...`. */
    readonly address: string,
    /** `LIFEGUARD_AMQP_URL` or `LIFEGUARD_REDIS_URL`. */
    readonly key: string,
    /** What was refused: `the user name and password`, `the virtual host "x"`, `database 99`. */
    readonly refused: string,
    /** The broker's own answer, as it gave it (`ACCESS_REFUSED - Login was refused ...`). */
    readonly answer: string,
    /** What to do about it. */
    readonly hint: string,
  ) {
    const why = `${answer.replace(/\.+$/, '')}. ${hint}`;
    super(
      [{ key, source: `${broker} at ${address}`, problem: `refused ${refused}: ${why}`, value: null }],
      `${broker} at ${address} refused ${refused} in ${key}: ${why}`,
    );
    this.name = 'BrokerRefusedError';
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
