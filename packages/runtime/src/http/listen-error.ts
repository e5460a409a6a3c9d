import { ConfigError } from '../errors.ts';

/** Listen errors an operator fixes with the port setting: the address is taken, or not permitted. */
const PORT_PROBLEMS: Readonly<Record<string, string>> = {
  EADDRINUSE: 'the address is already in use by another process; stop it or choose a free port',
  EACCES: 'listening on this port is not permitted for this user; choose a port above 1023',
  EADDRNOTAVAIL: 'the host address is not one of this machine’s addresses',
};

/**
 * A server's listen error as the ConfigError naming the setting to change (start-up then stops with
 * one line and exit status 78), or the error as it was when the setting cannot fix it.
 * @param portKey the setting the port came from, e.g. `LIFEGUARD_HTTP_PORT`
 */
export function listenErrorAsConfigError(
  error: unknown,
  portKey: string,
  host: string,
  port: number,
): unknown {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  const problem = code === undefined ? undefined : PORT_PROBLEMS[code];
  if (problem === undefined) return error;
  return new ConfigError(
    [{ key: portKey, source: 'environment or default', problem, value: JSON.stringify(String(port)) }],
    `cannot listen on ${host}:${port} (${portKey}): ${problem}`,
  );
}
