/** One problem found in a message: where (`["args", "device"]`, empty for the whole value) and what. */
export interface ContractIssue {
  readonly path: ReadonlyArray<string | number>;
  readonly message: string;
}

/**
 * A message or record that does not satisfy its contract. The message names every offending field
 * and its problem (`host.down event: host: Invalid input: expected string, received number`), so logs
 * and dead-letter reasons point at it; `path` is the first offending field.
 */
export class ContractViolationError extends Error {
  readonly contract: string;
  readonly issues: ReadonlyArray<ContractIssue>;

  constructor(contract: string, issues: ReadonlyArray<ContractIssue> | string) {
    const list = typeof issues === 'string' ? [{ path: [], message: issues }] : issues;
    const text = list
      .map((issue) => (issue.path.length > 0 ? `${issue.path.join('.')}: ${issue.message}` : issue.message))
      .join('; ');
    super(`${contract}: ${text}`);
    this.name = 'ContractViolationError';
    this.contract = contract;
    this.issues = list;
  }

  /** The first offending field's path (empty when the whole value is wrong). */
  get path(): ReadonlyArray<string | number> {
    return this.issues[0]?.path ?? [];
  }
}
