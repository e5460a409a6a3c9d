import { INSTANCE_HA_CONSTANTS } from '@lifeguard/instance-ha';

interface NewestHeartbeat {
  /** Unix seconds of the newest accepted heartbeat of the host. */
  seconds: number;
  /** The HMACs (hex) of the datagrams accepted with that time stamp. */
  signatures: Set<string>;
}

/**
 * Refuses replayed heartbeats (docs/instance-ha-rules.md#heartbeats): per host, a heartbeat whose time
 * stamp (Unix seconds) is older than the newest one already accepted, or a datagram already accepted
 * with that same time stamp, is a replay. Heartbeats older than the verification window are refused by
 * `verifyHeartbeat` before they get here, so an entry older than that window is forgotten. The state is
 * per listener (each replica receives every heartbeat from the sender).
 */
export class HeartbeatReplayGuard {
  private readonly newest = new Map<string, NewestHeartbeat>();

  /**
   * Admits a verified heartbeat of `host` sent at `sentAt`; `datagram` is the whole packet (its last
   * 32 bytes are the HMAC). @returns true when it is new, false when it is a replay
   */
  admit(host: string, sentAt: Date, datagram: Buffer, now: Date = new Date()): boolean {
    this.forgetOlderThanWindow(now);
    const seconds = Math.floor(sentAt.getTime() / 1000);
    const signature = datagram.subarray(datagram.length - 32).toString('hex');
    const known = this.newest.get(host);
    if (known === undefined || seconds > known.seconds) {
      this.newest.set(host, { seconds, signatures: new Set([signature]) });
      return true;
    }
    if (seconds < known.seconds || known.signatures.has(signature)) return false;
    known.signatures.add(signature);
    return true;
  }

  private forgetOlderThanWindow(now: Date): void {
    const oldest = now.getTime() / 1000 - INSTANCE_HA_CONSTANTS.heartbeatAcceptPastSeconds - 1;
    for (const [host, entry] of this.newest) {
      if (entry.seconds < oldest) this.newest.delete(host);
    }
  }
}
