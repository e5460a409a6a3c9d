import { type OwnVariables, ownVariablesOf } from '@lifeguard/runtime';
import { provisioningConfigurationSchema } from './configuration.ts';

/**
 * Every `LIFEGUARD_PROVISIONING_*` variable provisioning-blocks reads (its configuration schema): any
 * other set under that prefix is named at start-up, with the one it most likely misspells
 * (`LIFEGUARD_PROVISIONING_RPC_PREFECH`: did you mean `LIFEGUARD_PROVISIONING_RPC_PREFETCH`?).
 */
export const PROVISIONING_VARIABLES: OwnVariables = ownVariablesOf(
  ['LIFEGUARD_PROVISIONING_'],
  provisioningConfigurationSchema,
);
