// Types of scripts/real-nova-harness.mjs, for the tests that import it.
export const MOST_HARNESSES: number;
export function parseEnvFile(text: string): Record<string, string>;
export function harnessSettings(
  number: number,
  environment?: Record<string, string | undefined>,
): Record<string, string>;
export function ensureRealNova(
  root: string,
  options?: { keystone?: boolean; settings?: Record<string, string>; exportValues?: boolean; label?: string },
): Promise<{
  stop: () => Promise<void>;
  values: Record<string, string> | null;
  /** Why there is no harness (values null). */
  reason?: string;
}>;
