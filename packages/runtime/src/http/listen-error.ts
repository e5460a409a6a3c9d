import { listenProblem } from '@lifeguard/contracts';
import { ConfigError } from '../errors.ts';

/**
 * A server's listen error as the ConfigError naming the setting to change (start-up then stops with
 * one line and exit status 78), or the error as it was when the setting cannot fix it (listenProblem).
 * @param keys the settings the port and the host came from, e.g. `LIFEGUARD_HTTP_PORT` and
 *   `LIFEGUARD_HTTP_HOST`: the one that fixes the error is named
 */
export function listenErrorAsConfigError(
  error: unknown,
  keys: { readonly port: string; readonly host: string },
  host: string,
  port: number,
): unknown {
  const found = listenProblem(error);
  if (found === null) return error;
  const key = found.setting === 'host' ? keys.host : keys.port;
  return new ConfigError(
    [
      {
        key,
        source: 'environment or default',
        problem: found.problem,
        value: JSON.stringify(found.setting === 'host' ? host : String(port)),
      },
    ],
    `cannot listen on ${host}:${port} (${key}): ${found.problem}`,
  );
}
