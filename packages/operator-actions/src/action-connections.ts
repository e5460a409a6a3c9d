import type { OperatorConnections } from '@lifeguard/operator-views';

/**
 * What an operator action connects to: Redis (the deployment's key prefix, the incidents), RabbitMQ
 * (the event publisher), and Nova. The console passes its OperatorConnections; the `lifeguard` command
 * its context, which holds the same.
 */
export type ActionConnections = Pick<
  OperatorConnections,
  'keyPrefix' | 'redis' | 'amqp' | 'incidents' | 'openstack' | 'events'
>;
