/** Process exit statuses of the `lifeguard` command. */
export const EXIT_OK = 0;
/** The command ran and failed (unreachable broker, unknown host, a refusal, an API error). */
export const EXIT_FAILURE = 1;
/** The command line was wrong (unknown command or option, missing argument, missing `--yes`). */
export const EXIT_USAGE = 2;

/** A command failed for a reason the operator should read: printed as `lifeguard: <message>`, exit 1. */
export class CliError extends Error {
  constructor(
    message: string,
    /** Further lines printed under the message (what to do next). */
    readonly hints: ReadonlyArray<string> = [],
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/**
 * `host confirm-fenced` refused because the host still reports to Nova or sends heartbeats: nothing
 * was recorded. `evidence` holds the reports (one line each); `--host-is-reporting-override` records
 * the confirmation anyway.
 */
export class HostIsReportingError extends CliError {
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

/** The command line is wrong in a way commander cannot see (an invalid value, a missing `--yes`): exit 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/**
 * A destructive command was run without `--yes` where nobody can be asked (no terminal), or the
 * operator did not confirm at the prompt: exit 2, nothing was changed.
 */
export class ConfirmationRequiredError extends UsageError {
  constructor(readonly action: string) {
    super(`${action}: not confirmed; nothing was changed (add --yes to confirm)`);
    this.name = 'ConfirmationRequiredError';
  }
}
