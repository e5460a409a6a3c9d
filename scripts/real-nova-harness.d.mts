// Types of scripts/real-nova-harness.mjs, for the tests that import it.
export const MOST_HARNESSES: number;
export const HARNESS_MODULES: Record<string, string>;
export const KEYSTONE_MODULES: Record<string, string>;
export function parseEnvFile(text: string): Record<string, string>;
export function harnessSettings(
  number: number,
  environment?: Record<string, string | undefined>,
): Record<string, string>;
/** How missing harness packages are provided: who is root, and how install.sh runs (its exit status). */
export interface PackageProvision {
  isRoot?: () => boolean;
  install?: (env: Record<string, string | undefined>) => Promise<number>;
}
export function missingHarnessPackages(keystone: boolean, env?: Record<string, string | undefined>): string[];
export function provideHarnessPackages(
  options: PackageProvision & {
    keystone: boolean;
    env: Record<string, string | undefined>;
    harness: string;
    state: string;
    log: (message: string) => void;
  },
): Promise<{ reason: string; details: string } | null>;
export function ensureRealNova(
  root: string,
  options?: PackageProvision & {
    keystone?: boolean;
    settings?: Record<string, string>;
    exportValues?: boolean;
    label?: string;
  },
): Promise<{
  stop: () => Promise<void>;
  values: Record<string, string> | null;
  /** Why there is no harness (values null). */
  reason?: string;
}>;
