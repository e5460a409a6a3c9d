/**
 * The sum of every sample of the counter or gauge `name` (all label sets) on the /metrics page a
 * worker serves on 127.0.0.1:`port`; 0 while it has none, null while the page does not answer.
 */
export async function metricTotal(port: number, name: string): Promise<number | null> {
  const response = await fetch(`http://127.0.0.1:${port}/metrics`).catch(() => null);
  if (!response?.ok) return null;
  let total = 0;
  for (const line of (await response.text()).split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{.*\})? (\S+)$/.exec(line);
    if (match?.[1] === name) total += Number(match[2]);
  }
  return total;
}

/**
 * Polls `metricTotal(port, name)` every 100 ms until it is above `above` and returns the moment it
 * first was (milliseconds since the epoch), or null when `timeoutMilliseconds` passed first.
 */
export async function whenMetricExceeds(
  port: number,
  name: string,
  above: number,
  timeoutMilliseconds = 300_000,
): Promise<number | null> {
  const deadline = Date.now() + timeoutMilliseconds;
  while (Date.now() < deadline) {
    const value = await metricTotal(port, name);
    if (value !== null && value > above) return Date.now();
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return null;
}
