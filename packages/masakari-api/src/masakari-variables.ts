import type { OwnVariables } from '@lifeguard/runtime';
import { masakariApiSettingsSchema } from './settings.ts';

/**
 * The Masakari engine's own variables (packages/masakari-engine/src/settings.ts), which share the
 * `LIFEGUARD_MASAKARI_` prefix with the API's: the engine's tests check that this list is its
 * schema's. Listed here because the engine depends on this package, not the other way.
 */
export const MASAKARI_ENGINE_VARIABLES = [
  'LIFEGUARD_MASAKARI_ENGINE_CONCURRENCY',
  'LIFEGUARD_MASAKARI_INSTANCE_RESTART_TIMEOUT_SECONDS',
  'LIFEGUARD_MASAKARI_RECOVERY_TIMEOUT_SECONDS',
  'LIFEGUARD_MASAKARI_RETRY_SECONDS',
  'LIFEGUARD_MASAKARI_SERVICE_UPDATE_TIMEOUT_SECONDS',
  'LIFEGUARD_MASAKARI_VERDICT_TIMEOUT_SECONDS',
  'LIFEGUARD_MASAKARI_WATCH_SECONDS',
] as const;

/**
 * Every `LIFEGUARD_MASAKARI_*` variable the Masakari API and engine read: any other set under that
 * prefix is named at start-up by both, with the one it most likely misspells
 * (`LIFEGUARD_MASAKARI_API_PROT`: did you mean `LIFEGUARD_MASAKARI_API_PORT`?).
 */
export const MASAKARI_VARIABLES: OwnVariables = {
  prefixes: ['LIFEGUARD_MASAKARI_'],
  known: [...Object.keys(masakariApiSettingsSchema.shape), ...MASAKARI_ENGINE_VARIABLES],
};
