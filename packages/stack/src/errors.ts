/** A broker the stack needs (RabbitMQ or Redis) did not answer; the message says how to start it. */
export class BrokerNotReachableError extends Error {
  constructor(
    /** One line per unreachable broker, each with its address, cause and the ways to start it. */
    readonly problems: ReadonlyArray<{ broker: 'RabbitMQ' | 'Redis'; address: string; message: string }>,
  ) {
    super(problems.map((problem) => problem.message).join('\n\n'));
    this.name = 'BrokerNotReachableError';
  }
}

/** The stack's own options are invalid (a bad count, a missing file in OS_CLOUD mode, a port in use). */
export class StackConfigurationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StackConfigurationError';
  }
}

/**
 * Redis holds keys under the key prefix that a simulated stack did not write: the launcher refuses to
 * reset them (they may belong to a real deployment sharing this Redis). The message names how many
 * there are and up to FOREIGN_KEYS_NAMED of them.
 */
export class ForeignStateError extends Error {
  constructor(
    readonly keyPrefix: string,
    readonly redisAddress: string,
    /** Every foreign key found. */
    readonly keys: ReadonlyArray<string>,
  ) {
    const named = keys.slice(0, FOREIGN_KEYS_NAMED).join(', ');
    const more = keys.length > FOREIGN_KEYS_NAMED ? `, and ${keys.length - FOREIGN_KEYS_NAMED} more` : '';
    super(
      `Redis at ${redisAddress} holds ${keys.length} key${keys.length === 1 ? '' : 's'} under the prefix ` +
        `"${keyPrefix}:" that the simulated stack did not write (${named}${more}); another lifeguard ` +
        'deployment may use them. The simulated cloud is new on every start, so the stack resets its own ' +
        'keys, and it will not touch these: set LIFEGUARD_REDIS_KEY_PREFIX to another prefix (for example ' +
        'lifeguard-demo), or point LIFEGUARD_REDIS_URL at another Redis. Only if they are yours to drop ' +
        `(say, left by a worker you ran by hand after the stack stopped): redis-cli --scan --pattern '${keyPrefix}:*' | xargs -r redis-cli unlink`,
    );
    this.name = 'ForeignStateError';
  }
}

/**
 * Lifeguard processes are registered under the key prefix a simulated stack would reset: another
 * stack (or deployment) runs on this Redis and prefix, and resetting would wipe its state.
 */
export class StateInUseError extends Error {
  constructor(
    readonly keyPrefix: string,
    readonly redisAddress: string,
    /** `<service> <instance>` of each registered process. */
    readonly processes: ReadonlyArray<string>,
  ) {
    super(
      `Redis at ${redisAddress} holds the state of a running lifeguard under the prefix "${keyPrefix}:" ` +
        `(${processes.length} process${processes.length === 1 ? '' : 'es'} registered: ${processes.join(', ')}). ` +
        'A simulated stack resets its prefix when it starts, which would wipe that state. Stop it (another npm ' +
        'start?), or give this stack a prefix of its own: LIFEGUARD_REDIS_KEY_PREFIX=lifeguard-demo2 (with a ' +
        'vhost of its own too). A process that was killed stays registered 15 s.',
    );
    this.name = 'StateInUseError';
  }
}

/** How many foreign keys a ForeignStateError names. */
export const FOREIGN_KEYS_NAMED = 5;

/**
 * Lifeguard workers already consume the intake queues of the vhost a simulated stack would use: it
 * would take another deployment's events (or split them with another stack).
 */
export class VhostInUseError extends Error {
  constructor(
    readonly amqpAddress: string,
    readonly queues: ReadonlyArray<{ queue: string; consumers: number }>,
  ) {
    super(
      `RabbitMQ at ${amqpAddress} is in use by a running lifeguard: ${queues
        .map(({ queue, consumers }) => `${queue} has ${consumers} consumer${consumers === 1 ? '' : 's'}`)
        .join(
          ', ',
        )}. Stop it (another npm start?), or give the simulated stack a vhost and a Redis key prefix ` +
        'of its own: rabbitmqctl add_vhost lifeguard-sim && rabbitmqctl set_permissions -p lifeguard-sim guest ".*" ".*" ".*", ' +
        'then LIFEGUARD_AMQP_URL=amqp://guest:guest@127.0.0.1:5672/lifeguard-sim LIFEGUARD_REDIS_KEY_PREFIX=lifeguard-sim npm start',
    );
    this.name = 'VhostInUseError';
  }
}

/** A worker process exited or did not become ready in time while the stack was starting. */
export class WorkerStartError extends Error {
  constructor(
    readonly worker: string,
    readonly reason: string,
    /** The worker's last output lines (standard error first), for the operator. */
    readonly lastLines: ReadonlyArray<string>,
    /** The worker's exit status when it exited (78: invalid configuration, 69: a broker unavailable), else null. */
    readonly exitCode: number | null = null,
  ) {
    const tail = lastLines.length > 0 ? `\nits last output:\n  ${lastLines.join('\n  ')}` : '';
    super(`${worker} ${reason}${tail}`);
    this.name = 'WorkerStartError';
  }
}

/** The build (`turbo run build`) the stack ran before starting failed. */
export class BuildFailedError extends Error {
  constructor(
    readonly exitCode: number | null,
    readonly output: string,
  ) {
    super(`the build failed (turbo run build exited with ${exitCode ?? 'a signal'}):\n${output}`);
    this.name = 'BuildFailedError';
  }
}

/**
 * The launcher's exit status for a worker that did not start: the worker's own when it names the
 * cause (78, invalid configuration; 69, a broker unavailable, as sysexits), so `npm start` exits as
 * the README's exit-status table says whichever process found the problem; 1 otherwise.
 */
export function workerStartExitStatus(error: WorkerStartError): number {
  return error.exitCode === 78 || error.exitCode === 69 ? error.exitCode : 1;
}
