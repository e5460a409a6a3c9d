import {
  createEvent,
  type EventData,
  type EventSink,
  type LifeguardEvent,
  type LifeguardEventType,
} from '@lifeguard/contracts';

/** The events a worker published, kept in a list (checked against their schema by createEvent). */
export class RecordedEvents implements EventSink {
  readonly events: LifeguardEvent[] = [];

  async publish<Type extends LifeguardEventType>(
    type: Type,
    data: EventData<Type>,
    options?: { readonly id?: string },
  ): Promise<unknown> {
    const event = createEvent(
      type,
      data,
      { service: 'instance-restart-worker', instance: 'test' },
      new Date(),
      options?.id,
    );
    this.events.push(event);
    return event;
  }

  of<Type extends LifeguardEventType>(type: Type): Array<Extract<LifeguardEvent, { type: Type }>> {
    return this.events.filter((event) => event.type === type) as Array<
      Extract<LifeguardEvent, { type: Type }>
    >;
  }
}
