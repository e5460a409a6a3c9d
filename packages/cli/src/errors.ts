import { OperatorError } from '@lifeguard/operator-actions';

/** Process exit statuses of the `lifeguard` command. */
export const EXIT_OK = 0;
/** The command ran and failed (unreachable broker, unknown host, a refusal, an API error). */
export const EXIT_FAILURE = 1;
/** The command line was wrong (unknown command or option, missing argument, missing `--yes`). */
export const EXIT_USAGE = 2;

/**
 * A command failed for a reason the operator should read: printed as `lifeguard: <message>` with its
 * hints (what to do next) under it, exit 1. An operator action's refusal (OperatorError of
 * @lifeguard/operator-actions, which this extends) is printed the same way.
 */
export class CliError extends OperatorError {
  constructor(message: string, hints: ReadonlyArray<string> = []) {
    super(message, hints);
    this.name = 'CliError';
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
