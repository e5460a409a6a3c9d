import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** Outcomes counted by `lifeguard_amqp_messages_total`. */
export const MESSAGE_OUTCOMES = ['ack', 'requeue', 'dead_letter'] as const;

/** Prometheus metrics of one AMQP client. */
export interface AmqpMetrics {
  connected: Gauge;
  blocked: Gauge;
  reconnects: Counter;
  messages: Counter<'queue' | 'outcome'>;
  publishConfirmSeconds: Histogram;
}

/** Registers the AMQP metrics (`lifeguard_amqp_*`) in a registry. */
export function createAmqpMetrics(registry: Registry): AmqpMetrics {
  return {
    connected: new Gauge({
      name: 'lifeguard_amqp_connected',
      help: '1 while the AMQP connection is open',
      registers: [registry],
    }),
    blocked: new Gauge({
      name: 'lifeguard_amqp_blocked',
      help: '1 while RabbitMQ blocks publishing on this connection (memory or disk alarm)',
      registers: [registry],
    }),
    reconnects: new Counter({
      name: 'lifeguard_amqp_reconnects_total',
      help: 'AMQP connections re-established after a loss',
      registers: [registry],
    }),
    messages: new Counter({
      name: 'lifeguard_amqp_messages_total',
      help: 'Consumed messages by queue and outcome (ack, requeue, dead_letter)',
      labelNames: ['queue', 'outcome'],
      registers: [registry],
    }),
    publishConfirmSeconds: new Histogram({
      name: 'lifeguard_amqp_publish_confirm_seconds',
      help: 'Time from publish to broker confirm, in seconds',
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [registry],
    }),
  };
}
