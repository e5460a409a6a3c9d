import type { Logger } from '@lifeguard/runtime';
import { parse as parseYaml } from 'yaml';
import { HostFencer, parseFencingConfig } from '../../src/index.ts';

/**
 * A HostFencer over fencing.yaml text as the tests' simulated BMCs need it: loopback BMCs allowed
 * (the simulators run on 127.0.0.1), TLS verified, no noop method, a 30-second default timeout and
 * the fence agents of /usr/sbin; `hooks.onSpawn` is told the pid of every fence agent spawned.
 */
export function loopbackFencer(
  yamlText: string,
  logger: Logger,
  hooks: { onSpawn?: (pid: number) => void } = {},
): HostFencer {
  const configuration = parseFencingConfig(parseYaml(yamlText) as Record<string, unknown>, 'fencing.yaml', {
    defaultTimeoutSeconds: 30,
    allowLoopback: true,
    allowNoop: false,
    tls: { verify: true, caBundlePath: null, certificatePath: null, keyPath: null },
    fenceAgentsDirectory: '/usr/sbin',
  });
  return new HostFencer(configuration, {
    logger,
    secrets: configuration.secrets(),
    allowNoop: false,
    fenceAgentHooks: { onSpawn: (pid) => hooks.onSpawn?.(pid) },
  });
}
