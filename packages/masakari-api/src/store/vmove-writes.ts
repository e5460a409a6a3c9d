/**
 * Recording the vmoves of a COMPUTE_HOST notification's recovery (Masakari 15's `vmoves` table):
 * one record per instance, under a uuid derived from the notification and the instance
 * (vmoveUuid), so writing the same facts again (a redelivered job, a second engine) changes nothing
 * and a record keeps its integer id and created_at through every update.
 */
import { NotificationNotFoundError, NotificationWithoutVmovesError } from '../errors.ts';
import { VmoveFacts, type VmoveRecord } from '../records.ts';
import { vmoveUuid } from '../vmove-id.ts';
import type { RecordReader } from './record-reader.ts';
import type { SequenceKind, StoreKeys } from './store-keys.ts';
import type { WriteCommand } from './versioned-writes.ts';

/** What recordVmoves uses of the store (MasakariStore has it; named here so the store may call this module). */
export interface VmoveWriteStore {
  readonly keys: StoreKeys;
  readonly read: RecordReader;
  timestamp(): string;
  nextId(kind: SequenceKind): Promise<number>;
  write<T>(
    operation: string,
    decide: () => Promise<{ commands: ReadonlyArray<WriteCommand>; result: T }>,
  ): Promise<T>;
}

const FACT_KEYS = Object.keys(VmoveFacts.shape) as Array<keyof VmoveFacts>;

/** Whether a record already says all of `facts`. Pure. */
export function sameFacts(record: VmoveRecord, facts: VmoveFacts): boolean {
  return FACT_KEYS.every((key) => record[key] === facts[key]);
}

/**
 * Creates or updates the vmoves of `notificationUuid` for `moves` (one per instance; the last of an
 * instance wins). Vmoves of instances not in `moves` are left as they are.
 * @returns every vmove written or already up to date, in the order of `moves`
 * @throws NotificationNotFoundError, NotificationWithoutVmovesError (not a COMPUTE_HOST notification),
 *   ZodError for facts that break VmoveFacts
 */
export async function recordVmoves(
  store: VmoveWriteStore,
  notificationUuid: string,
  moves: ReadonlyArray<VmoveFacts>,
): Promise<VmoveRecord[]> {
  const byUuid = new Map(
    moves.map((move) => {
      const facts = VmoveFacts.parse(move);
      return [vmoveUuid(notificationUuid, facts.instanceUuid), facts] as const;
    }),
  );
  const ids = new Map<string, number>();
  return store.write(`record vmoves of ${notificationUuid}`, async () => {
    const notification = await store.read.notification(notificationUuid);
    if (notification === null) throw new NotificationNotFoundError(notificationUuid);
    if (notification.type !== 'COMPUTE_HOST') throw new NotificationWithoutVmovesError(notificationUuid);
    const commands: WriteCommand[] = [];
    const records: VmoveRecord[] = [];
    for (const [uuid, facts] of byUuid) {
      const current = await store.read.vmove(uuid);
      if (current !== null && sameFacts(current, facts)) {
        records.push(current);
        continue;
      }
      const id = current?.id ?? ids.get(uuid) ?? (await store.nextId('vmove'));
      ids.set(uuid, id);
      const record: VmoveRecord = {
        id,
        uuid,
        notificationUuid,
        ...facts,
        createdAt: current?.createdAt ?? store.timestamp(),
        updatedAt: current === null ? null : store.timestamp(),
        deletedAt: null,
        deleted: false,
      };
      commands.push(
        ['SET', store.keys.vmove(uuid), JSON.stringify(record)],
        ['ZADD', store.keys.notificationVmoves(notificationUuid), String(id), uuid],
      );
      records.push(record);
    }
    return { commands, result: records };
  });
}
