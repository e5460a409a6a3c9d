import { type OwnVariables, ownVariablesOf } from '@lifeguard/runtime';
import { provisioningConfigurationSchema } from './configuration.ts';

/**
 * Every `LIFEGUARD_PROVISIONING_*` variable provisioning-blocks reads (its configuration schema): any
 * other set under that prefix is named at start-up, with the one it most likely misspells (a missing
 * letter in `..._RPC_PREFETCH`: did you mean `LIFEGUARD_PROVISIONING_RPC_PREFETCH`?).
 */
export const PROVISIONING_VARIABLES: OwnVariables = ownVariablesOf(
  ['LIFEGUARD_PROVISIONING_'],
  provisioningConfigurationSchema,
);
