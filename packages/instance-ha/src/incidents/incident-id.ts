import { randomBytes } from 'node:crypto';
import { shortHostname } from '../services/short-hostname.ts';

/**
 * A new incident id `<short host>.<yyyymmddThhmmssZ>.<4 hex>` (e.g. `compute-3.20261130T081502Z.7f3a`),
 * valid under the contracts' IncidentId rule: characters outside `[A-Za-z0-9._-]` become `_`, a
 * leading non-alphanumeric gets an `h` in front, and the host part is cut to 150 characters.
 */
export function newIncidentId(host: string, at: Date = new Date()): string {
  let name = shortHostname(host)
    .replace(/[^A-Za-z0-9._-]/g, '_')
    .slice(0, 150);
  if (!/^[A-Za-z0-9]/.test(name)) name = `h${name}`;
  const stamp = at
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  return `${name}.${stamp}.${randomBytes(2).toString('hex')}`;
}
