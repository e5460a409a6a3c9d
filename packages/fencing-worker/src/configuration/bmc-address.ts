import { BlockList, isIP } from 'node:net';

/** Addresses never acceptable for a BMC: unspecified, multicast, broadcast, link-local (cloud metadata). */
const ALWAYS_REFUSED = new BlockList();
ALWAYS_REFUSED.addSubnet('0.0.0.0', 8, 'ipv4');
ALWAYS_REFUSED.addSubnet('169.254.0.0', 16, 'ipv4');
ALWAYS_REFUSED.addSubnet('224.0.0.0', 4, 'ipv4');
ALWAYS_REFUSED.addAddress('255.255.255.255', 'ipv4');
ALWAYS_REFUSED.addAddress('::', 'ipv6');
ALWAYS_REFUSED.addSubnet('fe80::', 10, 'ipv6');
ALWAYS_REFUSED.addSubnet('ff00::', 8, 'ipv6');

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/** `::ffff:10.0.0.5` → `10.0.0.5`; other addresses unchanged. */
function unmapped(address: string): { address: string; family: 'ipv4' | 'ipv6' } {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return { address: mapped[1]!, family: 'ipv4' };
  return { address, family: isIP(address) === 6 ? 'ipv6' : 'ipv4' };
}

/**
 * Checks a BMC address from fencing.yaml, as InstanceHA validates `ipaddr` before fencing
 * (docs/instance-ha-rules.md#configuration-files): it must be an IP literal (a DNS name could be re-pointed at another machine), and, as
 * InstanceHA's SSRF guard for Redfish URLs, neither unspecified, multicast, broadcast nor link-local
 * (169.254.0.0/16 holds cloud metadata services). Loopback is refused too unless `allowLoopback`
 * (LIFEGUARD_FENCING_ALLOW_LOOPBACK: test beds and the simulated cloud run their BMCs on 127.0.0.1).
 * lifeguard applies the guard to every method, not only Redfish.
 * @returns null when acceptable, otherwise the problem in words
 */
export function bmcAddressProblem(address: string, allowLoopback: boolean): string | null {
  if (isIP(address) === 0) return 'must be an IP address literal (DNS names are not accepted)';
  const { address: plain, family } = unmapped(address);
  if (ALWAYS_REFUSED.check(plain, family)) {
    return 'must not be an unspecified, multicast, broadcast or link-local address';
  }
  if (!allowLoopback && LOOPBACK.check(plain, family)) {
    return 'must not be a loopback address (set LIFEGUARD_FENCING_ALLOW_LOOPBACK=true for test beds)';
  }
  return null;
}

/** The host part of a URL for an IP literal: IPv6 addresses in brackets. */
export function urlHost(address: string): string {
  return isIP(address) === 6 ? `[${address}]` : address;
}
