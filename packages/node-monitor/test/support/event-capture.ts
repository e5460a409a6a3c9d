import { EVENTS_EXCHANGE, LifeguardEvent } from '@lifeguard/contracts';
import amqp from 'amqplib';

/** Every lifeguard event published on a vhost, received through a private, exclusive queue. */
export interface EventCapture {
  readonly events: LifeguardEvent[];
  ofType<Type extends LifeguardEvent['type']>(type: Type): Array<Extract<LifeguardEvent, { type: Type }>>;
  close(): Promise<void>;
}

export async function captureEvents(url: string): Promise<EventCapture> {
  const connection = await amqp.connect(url);
  const channel = await connection.createChannel();
  await channel.assertExchange(EVENTS_EXCHANGE, 'topic', { durable: true });
  const { queue } = await channel.assertQueue('', { exclusive: true, autoDelete: true });
  await channel.bindQueue(queue, EVENTS_EXCHANGE, '#');
  const events: LifeguardEvent[] = [];
  await channel.consume(
    queue,
    (message) => {
      if (!message) return;
      events.push(LifeguardEvent.parse(JSON.parse(message.content.toString('utf8'))));
    },
    { noAck: true },
  );
  return {
    events,
    ofType: (type) => events.filter((event) => event.type === type) as never,
    close: async () => {
      await connection.close().catch(() => undefined);
    },
  };
}
