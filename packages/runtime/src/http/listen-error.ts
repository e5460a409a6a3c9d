import { listenProblem } from '@lifeguard/contracts';
import { ConfigError } from '../errors.ts';

/**
 * A server's listen error as the ConfigError naming the setting to change (start-up then stops with
 * one line and exit status 78), or the error as it was when the setting cannot fix it (listenProblem).
 * @param portKey the setting the port came from, e.g. `LIFEGUARD_HTTP_PORT`
 */
export function listenErrorAsConfigError(
  error: unknown,
  portKey: string,
  host: string,
  port: number,
): unknown {
  const found = listenProblem(error);
  if (found === null) return error;
  return new ConfigError(
    [
      {
        key: portKey,
        source: 'environment or default',
        problem: found.problem,
        value: JSON.stringify(String(port)),
      },
    ],
    `cannot listen on ${host}:${port} (${portKey}): ${found.problem}`,
  );
}
