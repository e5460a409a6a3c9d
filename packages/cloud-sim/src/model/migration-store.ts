import { randomUUID } from 'node:crypto';
import type { MigrationStatus, SimMigration } from './records.ts';

export interface MigrationQuery {
  instanceUuid?: string;
  sourceCompute?: string;
  /** Nova's `host` filter: source or destination. */
  host?: string;
  status?: string;
  migrationType?: string;
  /** Epoch milliseconds: `updated_at` (or `created_at`) at or after it. */
  changesSince?: number;
  /** Epoch milliseconds: `updated_at` (or `created_at`) at or before it. */
  changesBefore?: number;
  marker?: string;
  limit?: number;
}

/**
 * Migration records (evacuations), newest first as Nova sorts them from 2.59 (`created_at` desc,
 * then id desc), indexed by instance and by source host.
 */
export class MigrationStore {
  private readonly records: SimMigration[] = [];
  private readonly byUuid = new Map<string, SimMigration>();
  private readonly bySource = new Map<string, SimMigration[]>();
  private readonly byInstance = new Map<string, SimMigration[]>();
  private nextId = 1;

  create(instanceUuid: string, sourceCompute: string, destCompute: string | null, now: number): SimMigration {
    const migration: SimMigration = {
      id: this.nextId++,
      uuid: randomUUID(),
      instanceUuid,
      sourceCompute,
      destCompute,
      destHost: null,
      status: 'accepted',
      migrationType: 'evacuation',
      createdAt: now,
      updatedAt: now,
    };
    this.records.push(migration);
    this.byUuid.set(migration.uuid, migration);
    push(this.bySource, sourceCompute, migration);
    push(this.byInstance, instanceUuid, migration);
    return migration;
  }

  setStatus(migration: SimMigration, status: MigrationStatus, now: number): void {
    migration.status = status;
    migration.updatedAt = now;
  }

  get size(): number {
    return this.records.length;
  }

  has(uuid: string): boolean {
    return this.byUuid.has(uuid);
  }

  fromSource(host: string): SimMigration[] {
    return this.bySource.get(host) ?? [];
  }

  ofInstance(instanceUuid: string): SimMigration[] {
    return this.byInstance.get(instanceUuid) ?? [];
  }

  /**
   * What Nova does to an instance's migration records when the instance is deleted: they are
   * (soft-)deleted with it, so no listing shows them and they no longer hold back `forced_down: false`.
   * @returns how many records went
   */
  removeOfInstance(instanceUuid: string): number {
    const gone = this.byInstance.get(instanceUuid) ?? [];
    if (gone.length === 0) return 0;
    const uuids = new Set(gone.map((migration) => migration.uuid));
    this.byInstance.delete(instanceUuid);
    for (const migration of gone) {
      this.byUuid.delete(migration.uuid);
      const fromSource = this.bySource.get(migration.sourceCompute);
      if (fromSource) {
        const kept = fromSource.filter((each) => !uuids.has(each.uuid));
        if (kept.length > 0) this.bySource.set(migration.sourceCompute, kept);
        else this.bySource.delete(migration.sourceCompute);
      }
    }
    let write = 0;
    for (const migration of this.records) if (!uuids.has(migration.uuid)) this.records[write++] = migration;
    this.records.length = write;
    return gone.length;
  }

  /**
   * What a restarted nova-compute does on its source host: evacuations in accepted, pre-migrating
   * or done become completed.
   */
  completeEvacuationsFrom(host: string, now: number): number {
    let changed = 0;
    for (const migration of this.fromSource(host)) {
      if (
        migration.status === 'accepted' ||
        migration.status === 'pre-migrating' ||
        migration.status === 'done'
      ) {
        this.setStatus(migration, 'completed', now);
        changed++;
      }
    }
    return changed;
  }

  /**
   * One page of matching records, newest first, after the marker (a migration uuid, exclusive).
   * @returns null when the marker is unknown (Nova: 404 "Marker <uuid> could not be found.")
   */
  query(query: MigrationQuery): { migrations: SimMigration[]; full: boolean } | null {
    if (query.marker !== undefined && !this.byUuid.has(query.marker)) return null;
    const candidates = query.instanceUuid
      ? this.ofInstance(query.instanceUuid)
      : query.sourceCompute
        ? this.fromSource(query.sourceCompute)
        : this.records;
    const limit = query.limit ?? Number.POSITIVE_INFINITY;
    const result: SimMigration[] = [];
    let passedMarker = query.marker === undefined;
    for (let index = candidates.length - 1; index >= 0; index--) {
      const migration = candidates[index]!;
      if (!passedMarker) {
        if (migration.uuid === query.marker) passedMarker = true;
        continue;
      }
      if (!matches(migration, query)) continue;
      result.push(migration);
      if (result.length >= limit) break;
    }
    return { migrations: result, full: result.length >= limit };
  }
}

function matches(migration: SimMigration, query: MigrationQuery): boolean {
  if (query.instanceUuid && migration.instanceUuid !== query.instanceUuid) return false;
  if (query.sourceCompute && migration.sourceCompute !== query.sourceCompute) return false;
  if (query.host && migration.sourceCompute !== query.host && migration.destCompute !== query.host)
    return false;
  if (query.status && migration.status !== query.status) return false;
  if (query.migrationType && migration.migrationType !== query.migrationType) return false;
  // Nova's DB keeps whole seconds.
  const changed = Math.floor((migration.updatedAt ?? migration.createdAt) / 1000) * 1000;
  if (query.changesSince !== undefined && changed < query.changesSince) return false;
  if (query.changesBefore !== undefined && changed > query.changesBefore) return false;
  return true;
}

function push<Key, Value>(map: Map<Key, Value[]>, key: Key, value: Value): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}
