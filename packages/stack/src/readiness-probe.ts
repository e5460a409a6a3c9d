#!/usr/bin/env node
/**
 * The container healthcheck of every lifeguard service (docker-compose.yml): exits 0 when the URL
 * answers 200 within 3 seconds, 1 otherwise, printing the answer. The URL is the first argument, or
 * `http://127.0.0.1:<LIFEGUARD_HTTP_PORT>/readyz` — the worker's own readiness in its container.
 */
const port = process.env.LIFEGUARD_HTTP_PORT;
const url = process.argv[2] ?? (port ? `http://127.0.0.1:${port}/readyz` : null);
if (!url) {
  process.stderr.write('readiness probe: give a URL or set LIFEGUARD_HTTP_PORT\n');
  process.exit(2);
}
try {
  const response = await fetch(url, { signal: AbortSignal.timeout(3000) });
  const body = (await response.text()).slice(0, 500);
  process.stdout.write(`${response.status} ${body}\n`);
  process.exit(response.status === 200 ? 0 : 1);
} catch (error) {
  process.stdout.write(`${url}: ${(error as Error).message}\n`);
  process.exit(1);
}
