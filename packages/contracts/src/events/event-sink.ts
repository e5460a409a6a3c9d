import type { EventData, LifeguardEventType } from './events.ts';

/**
 * Where a worker's events go: the runtime's EventPublisher (confirmed publish + journal), or a list in
 * a test. One interface for every worker that publishes events.
 */
export interface EventSink {
  /** `options.id`: the transition's id (transitionEventId), so a publication repeated after a crash is the same event. */
  publish<Type extends LifeguardEventType>(
    type: Type,
    data: EventData<Type>,
    options?: { readonly id?: string },
  ): Promise<unknown>;
}
