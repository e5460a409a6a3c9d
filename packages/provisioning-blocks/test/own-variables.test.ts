import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { unknownVariables } from '@lifeguard/runtime';
import { unknownVariableWarning } from '@lifeguard/testing';
import { PROVISIONING_VARIABLES, provisioningConfigurationSchema } from '../src/index.ts';

describe('the LIFEGUARD_PROVISIONING_* variables', () => {
  it('are every variable of the configuration schema', () => {
    assert.deepEqual(
      [...PROVISIONING_VARIABLES.known].sort(),
      Object.keys(provisioningConfigurationSchema.shape).sort(),
    );
  });

  it('name LIFEGUARD_PROVISIONING_RPC_PREFECH with the variable it misspells, and leave the others alone', () => {
    assert.deepEqual(
      unknownVariables(
        {
          LIFEGUARD_PROVISIONING_RPC_PREFECH: '50',
          LIFEGUARD_PROVISIONING_ROLE: 'service',
          LIFEGUARD_AMQP_URL: 'amqp://127.0.0.1',
        },
        PROVISIONING_VARIABLES,
      ).map((each) => [each.variable, each.meant]),
      [['LIFEGUARD_PROVISIONING_RPC_PREFECH', 'LIFEGUARD_PROVISIONING_RPC_PREFETCH']],
    );
  });

  it('provisioning-blocks logs a warning naming LIFEGUARD_PROVISIONING_RPC_PREFECH and LIFEGUARD_PROVISIONING_RPC_PREFETCH before it contacts a broker', async () => {
    const record = await unknownVariableWarning(
      'provisioning-blocks',
      'main',
      {
        LIFEGUARD_PROVISIONING_ROLE: 'service',
        LIFEGUARD_PROVISIONING_RPC_PREFECH: '50',
      },
      'LIFEGUARD_PROVISIONING_RPC_PREFECH',
    );
    assert.deepEqual(
      [record.level, record.variable, record.meant],
      [40, 'LIFEGUARD_PROVISIONING_RPC_PREFECH', 'LIFEGUARD_PROVISIONING_RPC_PREFETCH'],
    );
  });
});
