import { type MassEventHoldStore, type MassEventHolds, NO_MASS_EVENT_HOLDS } from '@lifeguard/instance-ha';
import type { Logger } from '@lifeguard/runtime';

/**
 * The mass-event holds from one cycle to the next. Kept in this process and, through the store, in
 * Redis: the first cycle of each leadership reads them there, so that a leader that took over in the
 * middle of a mass outage ending in waves (the last one killed, or cut off) holds the hosts still
 * coming back, as the last leader would have, instead of failing them at once. A store that cannot be
 * read is tried again at the next cycle (meanwhile this process's own holds are used); a failed write
 * is logged only.
 */
export class MassEventHoldMemory {
  private holds: MassEventHolds = NO_MASS_EVENT_HOLDS;
  /** The leadership whose holds were read from the store, or null until one was. */
  private readFor: number | null = null;

  constructor(
    private readonly store: Pick<MassEventHoldStore, 'read' | 'write'> | undefined,
    private readonly logger: Logger,
  ) {}

  /** The holds the last cycle left, read from the store on the first cycle of the leadership whose fencing token is `token`. */
  async current(token: number | null): Promise<MassEventHolds> {
    if (this.store && token !== null && token !== this.readFor) {
      try {
        this.holds = await this.store.read();
        this.readFor = token;
        if (this.holds.size > 0)
          this.logger.info(
            { hosts: [...this.holds.keys()] },
            'mass-event holds of the last leader taken over: these hosts stay held as they were',
          );
      } catch (error) {
        this.logger.warn({ err: error }, 'mass-event holds not read; reading them again next cycle');
      }
    }
    return this.holds;
  }

  /**
   * Keeps the holds this cycle left; in the store for twice the hold-down and ten polls, past a
   * leader change.
   */
  async keep(
    holds: MassEventHolds,
    config: { readonly massEventHoldDownSeconds: number; readonly pollSeconds: number },
  ): Promise<void> {
    this.holds = holds;
    await this.store
      ?.write(holds, 2 * config.massEventHoldDownSeconds + 10 * config.pollSeconds)
      .catch((error: unknown) => this.logger.warn({ err: error }, 'mass-event holds not written'));
  }
}
