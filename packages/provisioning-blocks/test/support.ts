import { type LifeguardEvent, Port } from '@lifeguard/contracts';
import type { Redis } from 'ioredis';
import type { OutboxEntry } from '../src/store/outbox-relay.ts';
import type { PortStore } from '../src/store/port-store.ts';
import type { ProvisioningKeys } from '../src/store/provisioning-keys.ts';

export const SOURCE = { service: 'provisioning-blocks', instance: 'test:1' };

/** Stores a port record directly (no ML2 rules), with defaults for every field not given. */
export async function storePort(ports: PortStore, fields: Partial<Port> & { id: string }): Promise<void> {
  const port = Port.parse({ network_id: 'net-1', ...fields });
  const result = await ports.write(
    port.id,
    null,
    port,
    { previous: port.mac_address, current: port.mac_address },
    [],
    null,
  );
  if (result.status !== 'ok') throw new Error(`storePort ${port.id}: ${result.status}`);
}

/** Every entry in the outbox stream, oldest first, with its event parsed. */
export async function outboxEvents(
  redis: Redis,
  keys: ProvisioningKeys,
): Promise<Array<OutboxEntry & { parsed: LifeguardEvent }>> {
  const entries = await redis.xrange(keys.outbox, '-', '+');
  return entries.map(([streamId, fields]) => {
    const values: Record<string, string> = {};
    for (let index = 0; index + 1 < fields.length; index += 2) values[fields[index]!] = fields[index + 1]!;
    return {
      streamId,
      id: values.id!,
      type: values.type!,
      routingKey: values.routingKey!,
      occurredAt: values.occurredAt!,
      event: values.event!,
      parsed: JSON.parse(values.event!) as LifeguardEvent,
    };
  });
}
