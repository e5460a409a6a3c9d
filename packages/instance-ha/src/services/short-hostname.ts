/**
 * The short hostname: the text before the first dot (`compute-0.example.com` → `compute-0`).
 * InstanceHA compares hosts this way everywhere (fencing.yaml keys, de-duplication, kdump sources;
 * research/instance-ha.md 1.3, 1.8 G0, 1.16), so `compute-0` and `compute-0.foo.bar` are one host.
 */
export function shortHostname(host: string): string {
  const index = host.indexOf('.');
  return index < 0 ? host : host.slice(0, index);
}
