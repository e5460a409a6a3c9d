/**
 * Masakari's fault envelope (masakari/api/openstack/wsgi.py, class Fault):
 * `{"<faultName>": {"code": <status>, "message": <text>}}`, and keystonemiddleware's 401 body
 * (docs/masakari-api.md#9-errors).
 */

const FAULT_NAMES: Readonly<Record<number, string>> = {
  400: 'badRequest',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'itemNotFound',
  405: 'badMethod',
  409: 'conflictingRequest',
  413: 'overLimit',
  415: 'badMediaType',
  429: 'overLimit',
  501: 'notImplemented',
  503: 'serviceUnavailable',
};

/** The fault name of a status: Masakari's map, else `masakariFault` (406, 500...). */
export const faultName = (status: number): string => FAULT_NAMES[status] ?? 'masakariFault';

/** The body of a fault. */
export function faultBody(
  status: number,
  message: string,
): Record<string, { code: number; message: string }> {
  return { [faultName(status)]: { code: status, message } };
}

/** keystonemiddleware's answer to a missing or invalid token (with `WWW-Authenticate`). */
export const UNAUTHORIZED_BODY = {
  error: { code: 401, title: 'Unauthorized', message: 'The request you have made requires authentication.' },
} as const;

/** keystonemiddleware's answer when Keystone cannot be reached to validate a token. */
export const KEYSTONE_UNAVAILABLE_BODY = {
  error: {
    code: 503,
    title: 'Service Unavailable',
    message: 'The Keystone service is temporarily unavailable.',
  },
} as const;

/** The message of an unexpected error (Masakari's FaultWrapper: 500, `masakariFault`). */
export const UNEXPECTED_ERROR_MESSAGE = 'Unexpected API Error. The masakari-api log has the details.';
