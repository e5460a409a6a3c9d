import { nameBasedUuid } from '@lifeguard/contracts';

/**
 * The `uuid` of the vmove of one instance in one notification's recovery: the name-based UUID
 * (RFC 9562 version 5) of the instance's uuid in the notification's uuid as namespace. Whoever writes
 * or reads it, and however often, it is the same. Pure.
 */
export function vmoveUuid(notificationUuid: string, instanceUuid: string): string {
  return nameBasedUuid(notificationUuid, instanceUuid.toLowerCase());
}
