import { Counter, type Registry } from 'prom-client';

export interface MasakariEngineMetrics {
  /** Notifications processed, by type and the status they were left in. */
  readonly notifications: Counter<'type' | 'status'>;
}

export function createMasakariEngineMetrics(registry: Registry): MasakariEngineMetrics {
  return {
    notifications: new Counter({
      name: 'lifeguard_masakari_notifications_total',
      help: 'Masakari notifications processed, by type (COMPUTE_HOST, VM, PROCESS) and the status written',
      labelNames: ['type', 'status'],
      registers: [registry],
    }),
  };
}
