import { ConfigError, type ConfigProblem } from '@lifeguard/runtime';
import { canonicalAddress } from '../kdump/address.ts';
import { describeRaw } from './values.ts';

/**
 * Reads KDUMP_ADDRESS_MAP: a YAML mapping of fence_kdump source address to compute host, or a comma
 * list `address=host,address=host`; null or empty is an empty map. Addresses are put in canonical
 * form (`2001:DB8::0010` → `2001:db8::10`, `::ffff:192.0.2.12` → `192.0.2.12`), hosts trimmed.
 * @param source the file path or `environment`, for errors
 * @throws ConfigError naming KDUMP_ADDRESS_MAP for a value of another type, or
 *   `KDUMP_ADDRESS_MAP.<address>` for every entry that is not an IP address or has no host
 */
export function parseAddressMap(raw: unknown, source: string): Map<string, string> {
  const map = new Map<string, string>();
  if (raw === null || raw === undefined || raw === '') return map;
  const problems: ConfigProblem[] = [];
  for (const [address, host] of addressMapEntries(raw, source)) {
    const canonical = canonicalAddress(address);
    if (canonical === null) {
      problems.push({
        key: `KDUMP_ADDRESS_MAP.${address}`,
        source,
        problem: 'not an IP address',
        value: null,
      });
    } else if (typeof host !== 'string' || host.trim() === '') {
      problems.push({
        key: `KDUMP_ADDRESS_MAP.${address}`,
        source,
        problem: 'the host must be a non-empty string',
        value: describeRaw(host),
      });
    } else {
      map.set(canonical, host.trim());
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return map;
}

function addressMapEntries(raw: unknown, source: string): Array<[string, unknown]> {
  if (typeof raw === 'string') {
    return raw
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item !== '')
      .map((item) => {
        const index = item.lastIndexOf('=');
        return index < 0 ? [item, undefined] : [item.slice(0, index).trim(), item.slice(index + 1).trim()];
      });
  }
  if (typeof raw === 'object' && raw !== null && !Array.isArray(raw)) {
    return Object.entries(raw as Record<string, unknown>);
  }
  throw new ConfigError([
    {
      key: 'KDUMP_ADDRESS_MAP',
      source,
      problem: 'must be a mapping of address to host, or "address=host,address=host"',
      value: describeRaw(raw),
    },
  ]);
}
