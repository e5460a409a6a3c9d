/**
 * What went wrong with a fence, as far as retrying is concerned:
 * - `configuration`: fencing.yaml cannot fence this host (unknown host, a method refused by policy);
 * - `credentials`: the BMC refused the login (HTTP 401/403, IPMI RAKP failure);
 * - `identity`: the BMC answering at the configured address is not the expected machine;
 * - `unreachable`: no answer, a timeout, a connection error or an HTTP 5xx;
 * - `not-confirmed`: the power-off command was taken but the power state never read "off" in time;
 * - `refused`: the BMC answered but refused the action (HTTP 400/409 while the power is still on);
 * - `agent-failed`: a fence agent failed for a reason its output does not name.
 */
export const FENCING_ERROR_KINDS = [
  'configuration',
  'credentials',
  'identity',
  'unreachable',
  'not-confirmed',
  'refused',
  'agent-failed',
] as const;
export type FencingErrorKind = (typeof FENCING_ERROR_KINDS)[number];

const UNRECOVERABLE_KINDS: ReadonlySet<FencingErrorKind> = new Set([
  'configuration',
  'credentials',
  'identity',
]);

/**
 * A fence (or power-on) did not succeed. `recoverable` is false for the kinds a retry cannot fix
 * (configuration, credentials, identity): the job ends at once and a person has to act.
 * Messages never contain a password: program output is passed through `redactSecrets` first.
 */
export class FencingError extends Error {
  readonly kind: FencingErrorKind;

  constructor(kind: FencingErrorKind, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'FencingError';
    this.kind = kind;
  }

  /** False for configuration, credentials and identity errors. */
  get recoverable(): boolean {
    return !UNRECOVERABLE_KINDS.has(this.kind);
  }
}

/** fencing.yaml has no entry for the host (matched by short hostname), or forbids the method. */
export class FencingConfigurationError extends FencingError {
  constructor(message: string) {
    super('configuration', message);
    this.name = 'FencingConfigurationError';
  }
}

/** The BMC refused the credentials (HTTP 401/403, IPMI "RAKP 2 HMAC is invalid", ...). Never retried. */
export class FenceCredentialsError extends FencingError {
  constructor(message: string) {
    super('credentials', message);
    this.name = 'FenceCredentialsError';
  }
}

/**
 * The BMC at the configured address reports another identity (Redfish system `UUID`, IPMI GUID) than
 * fencing.yaml expects: powering it off could stop a healthy machine, so the method is refused.
 */
export class FenceIdentityMismatchError extends FencingError {
  constructor(
    readonly method: string,
    readonly expected: string,
    readonly actual: string,
  ) {
    super(
      'identity',
      `${method}: the BMC reports identity ${actual}, fencing.yaml expects ${expected}; refusing to power it off`,
    );
    this.name = 'FenceIdentityMismatchError';
  }
}

/** Every method of a host's fencing topology failed; `failures` holds each method's error in order. */
export class FencingFailedError extends FencingError {
  constructor(
    readonly host: string,
    readonly failures: ReadonlyArray<{ method: string; error: FencingError }>,
  ) {
    const recoverable = failures.some((failure) => failure.error.recoverable);
    const kind = recoverable
      ? (failures.find((failure) => failure.error.recoverable)?.error.kind ?? 'agent-failed')
      : (failures[0]?.error.kind ?? 'configuration');
    super(
      kind,
      `fencing ${host} failed: ${failures.map((failure) => `[${failure.method}] ${failure.error.message}`).join('; ')}`,
    );
    this.name = 'FencingFailedError';
  }
}

/**
 * A fence was about to run but a gate that can change (THRESHOLD exceeded, an aggregate's
 * `instanceha:max_failures`, DISABLED) holds it back: the job waits and checks again later; the
 * incident stays open. Not a failure: it never counts as an attempt.
 */
export class FenceDeferredError extends Error {
  constructor(
    /** The gate that held the fence back. */
    readonly gate: string,
    readonly reason: string,
    /** How long to wait before checking again, in seconds; absent: POLL. */
    readonly retryInSeconds?: number,
  ) {
    super(`fence deferred by ${gate}: ${reason}`);
    this.name = 'FenceDeferredError';
  }
}

/** A fence must never run on this decision (the host's compute service is gone from Nova). */
export class FenceRefusedError extends FencingError {
  constructor(
    readonly gate: string,
    reason: string,
  ) {
    super('configuration', `fence refused by ${gate}: ${reason}`);
    this.name = 'FenceRefusedError';
  }
}

/**
 * A fence refused because Redis' memory cannot be trusted: the deployment generation marker is gone
 * or its rebuild from Nova is pending (`redis-memory-lost`), or the incident the job acts on is not
 * in Redis (`no-incident`). No power action and no Nova change follow (docs/failure-modes.md#redis-restarted-empty).
 */
export class BlankMemoryError extends Error {
  constructor(
    readonly reason: 'redis-memory-lost' | 'no-incident',
    readonly detail: string,
  ) {
    super(`fence refused on a blank memory: ${detail}`);
    this.name = 'BlankMemoryError';
  }
}
