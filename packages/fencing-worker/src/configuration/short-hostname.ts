/** The text before the first dot: `compute-0.example.com` → `compute-0` (research 1.3). */
export function shortHostname(host: string): string {
  const dot = host.indexOf('.');
  return dot === -1 ? host : host.slice(0, dot);
}
