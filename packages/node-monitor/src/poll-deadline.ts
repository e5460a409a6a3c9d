/** How long past POLL a poll may run before it is aborted, in seconds. */
export const POLL_DEADLINE_GRACE_SECONDS = 5;

/**
 * How long one poll may take before it is aborted, in milliseconds: POLL + POLL_DEADLINE_GRACE_SECONDS.
 * A poll of a healthy Nova takes well under a second; one that takes longer is reading a Nova that
 * hangs, and what it read first is too old to decide on by the time the rest comes.
 */
export function pollDeadlineMilliseconds(pollSeconds: number): number {
  return (pollSeconds + POLL_DEADLINE_GRACE_SECONDS) * 1000;
}

/** The reason a poll was aborted: it ran past its deadline; it decided nothing. */
export class PollDeadlineError extends Error {
  override readonly name = 'PollDeadlineError';

  constructor(deadlineMilliseconds: number) {
    super(
      `the poll ran longer than its deadline (${deadlineMilliseconds / 1000}s, POLL + ${POLL_DEADLINE_GRACE_SECONDS}s unless set otherwise): its OpenStack calls were cancelled and it decided nothing`,
    );
  }
}
