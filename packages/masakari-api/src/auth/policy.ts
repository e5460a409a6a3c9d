/**
 * Masakari 14's default policy (docs/masakari-api.md#12-authentication-and-policy): every segment,
 * host and notification call is `rule:admin_api`, i.e. the caller's token carries the `admin` role
 * (in any project; role names compare case-insensitively, as oslo.policy compares them); the
 * version documents are open to any valid token. Pure.
 */

/** The role `rule:admin_api` asks for. */
export const ADMIN_ROLE = 'admin';

/** Whether a caller with `roles` may perform a resource call (`rule:admin_api`). */
export function isAdmin(roles: ReadonlyArray<string>): boolean {
  return roles.some((role) => role.toLowerCase() === ADMIN_ROLE);
}

/** Masakari's 403 message for a refused rule. */
export function policyRefusal(rule: string): string {
  return `Policy doesn't allow ${rule} to be performed.`;
}
