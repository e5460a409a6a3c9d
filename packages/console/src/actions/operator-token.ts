import { createHash, timingSafeEqual } from 'node:crypto';

/** Why a write request was refused before anything ran. */
export class WriteRefusedError extends Error {
  constructor(
    message: string,
    /** 403: the console is read-only; 401: no token or the wrong one. */
    readonly statusCode: 401 | 403,
  ) {
    super(message);
    this.name = 'WriteRefusedError';
  }
}

/** The token a request carries: `Authorization: Bearer <token>` first, else the form field `token`. */
export function presentedToken(authorization: string | undefined, formToken: unknown): string | null {
  const bearer = authorization?.match(/^Bearer\s+(\S+)\s*$/i)?.[1];
  if (bearer) return bearer;
  return typeof formToken === 'string' && formToken !== '' ? formToken : null;
}

const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();

/**
 * Checks a write request's token against the operator token, in constant time (both sides are
 * hashed first, so neither the length nor a prefix leaks through timing).
 * @throws WriteRefusedError 403 when the console has no operator token (read-only), 401 when the
 *   request carries none or a different one
 */
export function checkOperatorToken(configured: string | undefined, presented: string | null): void {
  if (configured === undefined) {
    throw new WriteRefusedError(
      'the console is read-only: it was started without LIFEGUARD_CONSOLE_OPERATOR_TOKEN; nothing was changed',
      403,
    );
  }
  if (presented === null) {
    throw new WriteRefusedError('a write action needs the operator token; nothing was changed', 401);
  }
  if (!timingSafeEqual(digest(configured), digest(presented))) {
    throw new WriteRefusedError('the operator token is wrong; nothing was changed', 401);
  }
}
