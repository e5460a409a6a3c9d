import type { EventData, LifeguardEventType } from '@lifeguard/contracts';

/** Where the worker's events go: the runtime's EventPublisher (confirmed publish + journal). */
export interface EventSink {
  publish<Type extends LifeguardEventType>(type: Type, data: EventData<Type>): Promise<unknown>;
}
