import type { Migration } from '@lifeguard/openstack';

/** Evacuation migration statuses that no longer hold a host back (docs/instance-ha-rules.md#re-enable step 2). */
export const TERMINAL_MIGRATION_STATUSES: ReadonlySet<string> = new Set([
  'completed',
  'done',
  'error',
  'failed',
  'cancelled',
]);

/** How many of a host's evacuation migrations are still under way (`accepted`, `pre-migrating`, ...). */
export function migrationsInProgress(migrations: ReadonlyArray<Pick<Migration, 'status'>>): number {
  return migrations.filter((migration) => !TERMINAL_MIGRATION_STATUSES.has(migration.status.toLowerCase()))
    .length;
}
