/**
 * The short hostname: the text before the first dot (`compute-0.example.com` → `compute-0`).
 * InstanceHA compares hosts this way everywhere (fencing.yaml keys, de-duplication, kdump sources;
 * docs/instance-ha-rules.md#short-host-names), so `compute-0` and `compute-0.foo.bar` are one host.
 */
export function shortHostname(host: string): string {
  const index = host.indexOf('.');
  return index < 0 ? host : host.slice(0, index);
}
