/**
 * An operator action refused, or could not run, for a reason the operator should read: the message,
 * and what to do next (`hints`). The `lifeguard` command prints it as `lifeguard: <message>` with the
 * hints under it (exit status 1); the console answers `Not done` with them.
 */
export class OperatorError extends Error {
  constructor(
    message: string,
    /** Further lines shown under the message (what to do next). */
    readonly hints: ReadonlyArray<string> = [],
  ) {
    super(message);
    this.name = 'OperatorError';
  }
}

/**
 * `confirm-fenced` refused because the host still reports to Nova or sends heartbeats: nothing was
 * recorded. `evidence` holds the reports (one line each); the reporting override records the
 * confirmation anyway.
 */
export class HostIsReportingError extends OperatorError {
  constructor(
    readonly host: string,
    readonly evidence: ReadonlyArray<string>,
    hints: ReadonlyArray<string>,
  ) {
    super(`${host} is reporting: refusing to record it as powered off; nothing was recorded`, [
      ...evidence,
      ...hints,
    ]);
    this.name = 'HostIsReportingError';
  }
}
