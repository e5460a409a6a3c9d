import type { z } from 'zod';
import { ContractViolationError } from './errors.ts';

/**
 * Validates `value` against `schema` and returns the parsed value.
 * @param contract a human name for the contract, used in the error message ("host.down event")
 * @throws ContractViolationError naming every failing field and its problem, for example
 *   `host.down event: host: Invalid input: expected string, received number`
 */
export function parseWith<Schema extends z.ZodType>(
  schema: Schema,
  value: unknown,
  contract: string,
): z.output<Schema> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw new ContractViolationError(
    contract,
    result.error.issues.map((issue) => ({
      path: issue.path.map((segment) => (typeof segment === 'symbol' ? String(segment) : segment)),
      message: issue.message,
    })),
  );
}
