import type { Migration, Server } from '@lifeguard/openstack';

/** Evacuation migration statuses that mean the instance runs elsewhere (docs/nova-facts.md#evacuation-in-nova, docs/nova-facts.md#migrations). */
export const MIGRATION_SUCCEEDED: ReadonlySet<string> = new Set(['done', 'completed']);
/** Evacuation migration statuses that mean the attempt failed (`cancelled` is harmless to include). */
export const MIGRATION_FAILED: ReadonlySet<string> = new Set(['error', 'failed', 'cancelled']);

/** What an evacuation migration record says: in progress (`accepted`, `pre-migrating`, ...), or not. */
export type MigrationProgress = 'succeeded' | 'failed' | 'in-progress' | 'none';

/** Classifies a record: none (no record, or no status), succeeded, failed, or in progress. */
export function migrationProgress(migration: Pick<Migration, 'status'> | null): MigrationProgress {
  if (migration === null || !migration.status) return 'none';
  const status = migration.status.toLowerCase();
  if (MIGRATION_SUCCEEDED.has(status)) return 'succeeded';
  if (MIGRATION_FAILED.has(status)) return 'failed';
  return 'in-progress';
}

/**
 * Nova and lifeguard clocks may differ: a migration created up to this many seconds before the
 * recorded fence still belongs to the incident.
 */
export const CLOCK_SKEW_ALLOWANCE_SECONDS = 300;

/**
 * The newest evacuation migration of this incident: `migration_type` evacuation (when present),
 * `source_compute` = the failed host, created no earlier than the fence (less the clock-skew
 * allowance). Records are compared by `created_at`, then `id`, newest first (Nova's own order, 2.59+).
 */
export function latestEvacuation(
  migrations: ReadonlyArray<Migration>,
  filter: { failedHost: string; notBefore: Date },
): Migration | null {
  const cutoff = filter.notBefore.getTime() - CLOCK_SKEW_ALLOWANCE_SECONDS * 1000;
  let latest: Migration | null = null;
  let latestTime = Number.NEGATIVE_INFINITY;
  for (const migration of migrations) {
    if (migration.migration_type !== undefined && migration.migration_type !== 'evacuation') continue;
    if (migration.source_compute !== filter.failedHost) continue;
    const created = novaTime(migration.created_at);
    if (Number.isNaN(created) || created < cutoff) continue;
    if (created > latestTime || (created === latestTime && latest !== null && migration.id > latest.id)) {
      latest = migration;
      latestTime = created;
    }
  }
  return latest;
}

/** Nova writes `created_at` without a zone (UTC): `2026-11-30T08:15:02.000000`. Milliseconds since the epoch. */
export function novaTime(value: string | null | undefined): number {
  if (!value) return Number.NaN;
  const zoned = /([zZ]|[+-]\d\d:?\d\d)$/.test(value) ? value : `${value}Z`;
  return Date.parse(zoned);
}

/** The server's host (`OS-EXT-SRV-ATTR:host`, admin view), or null. */
export function serverHost(server: Server): string | null {
  return server['OS-EXT-SRV-ATTR:host'] ?? null;
}

/** The server's task state (`OS-EXT-STS:task_state`), or null when idle. */
export function serverTaskState(server: Server): string | null {
  return server['OS-EXT-STS:task_state'] ?? null;
}

/** Nova's `fault.message` of a server in ERROR (what went wrong, in Nova's words), or null. */
export function serverFault(server: Server): string | null {
  return server.status === 'ERROR' ? (server.fault?.message ?? null) : null;
}

/**
 * True when the fault is the scheduler's NoValidHost (`No valid host was found. ...`): no compute host
 * could take the server, so evacuating it again at once cannot help.
 */
export function isNoValidHost(fault: string | null): boolean {
  return fault !== null && /no valid host was found/i.test(fault);
}

/**
 * A server as one look saw it, for failure reasons: `REBUILD on compute-05, task_state rebuild_spawning`,
 * `ERROR on compute-05, fault "No valid host was found. ..."` (without the fault when `withFault` is
 * false: a reason that already quotes it).
 */
export function describeServer(server: Server, withFault = true): string {
  const task = serverTaskState(server);
  const fault = withFault ? serverFault(server) : null;
  return `${server.status} on ${serverHost(server) ?? 'no host'}${task === null ? '' : `, task_state ${task}`}${fault === null ? '' : `, fault "${fault}"`}`;
}

/** What to do with an instance, read before writing (a retried or stalled job never evacuates twice). */
export type InstanceDecision =
  /** Idle on another host: evacuated (what remains is restoring its state and unlocking). */
  | { kind: 'landed'; host: string | null }
  /** An evacuation of this incident is under way: watch it. */
  | { kind: 'in-progress'; migration: Migration | null }
  /** On the failed host and not being evacuated, or the last attempt failed: (re-)issue evacuate. */
  | {
      kind: 'evacuate';
      reason: string;
      previous: Migration | null;
      /** The last attempt ended with Nova's NoValidHost fault: no host could take the server. */
      noValidHost: boolean;
    };

/**
 * Decides from the server and this incident's newest evacuation migration:
 * 1. migration in progress (`accepted`, `pre-migrating`, ...) → in progress;
 * 2. migration `error`/`failed`/`cancelled` → evacuate again (the reason quotes Nova's `fault.message`;
 *    `noValidHost` when that fault is NoValidHost);
 * 3. the server is on another host: idle → landed, busy (`task_state` set) → in progress;
 * 4. on the failed host but busy (`task_state` set) after lifeguard's own accepted evacuate, or with a
 *    `done` record (the rebuild finishing between two reads) → in progress: look again; this also
 *    covers a record that is slow to appear (docs/instance-ha-rules.md#smart_evacuation);
 * 5. otherwise → evacuate (a `done`/`completed` record cannot describe a server that sits idle on the
 *    failed host, so it is stale). A task left over from before the failure (no evacuation sent) is
 *    reset before evacuating.
 * Callers read the migrations before the server: a `done` record then implies the server read after
 * it already shows the destination.
 * @param evacuateSent lifeguard already had an evacuate accepted for this instance in this incident
 */
export function decideInstance(
  server: Server,
  latest: Migration | null,
  failedHost: string,
  evacuateSent: boolean,
): InstanceDecision {
  const progress = migrationProgress(latest);
  if (progress === 'in-progress') return { kind: 'in-progress', migration: latest };
  if (progress === 'failed') {
    const fault = serverFault(server);
    return {
      kind: 'evacuate',
      reason: `evacuation migration ${latest!.status}${fault === null ? '' : `: Nova says "${fault}"`}`,
      previous: latest,
      noValidHost: isNoValidHost(fault),
    };
  }
  const host = serverHost(server);
  const task = serverTaskState(server);
  if (host !== failedHost) {
    return task === null ? { kind: 'landed', host } : { kind: 'in-progress', migration: latest };
  }
  if (task !== null && (evacuateSent || progress === 'succeeded')) {
    return { kind: 'in-progress', migration: latest };
  }
  const fault = serverFault(server);
  return {
    kind: 'evacuate',
    reason: `${progress === 'none' ? 'no evacuation under way' : `stale ${latest!.status} record`}${fault === null ? '' : `; Nova says "${fault}"`}`,
    previous: latest,
    noValidHost: evacuateSent && isNoValidHost(fault),
  };
}
