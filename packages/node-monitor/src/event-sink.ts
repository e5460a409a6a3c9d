import type { EventData, LifeguardEventType } from '@lifeguard/contracts';

/** Where events go (the runtime's EventPublisher: confirmed publish + journal). */
export interface EventSink {
  /** `options.id`: the transition's id (transitionEventId), so a publication repeated after a crash is the same event. */
  publish<Type extends LifeguardEventType>(
    type: Type,
    data: EventData<Type>,
    options?: { readonly id?: string },
  ): Promise<unknown>;
}
