/**
 * Validates a request's `X-Auth-Token` against Keystone as keystonemiddleware's auth_token does:
 * `GET /v3/auth/tokens?nocatalog` with the service's own token in `X-Auth-Token` and the user's in
 * `X-Subject-Token`. Answers are cached for a short time (never past the token's expiry), valid and
 * invalid alike, so a burst of requests with one token costs Keystone one call.
 */
import { z } from 'zod';

/** What a valid token says about its caller. */
export interface TokenInfo {
  userId: string;
  projectId: string | null;
  roles: string[];
  expiresAtMilliseconds: number;
}

export type TokenValidation =
  | { kind: 'valid'; token: TokenInfo }
  | { kind: 'invalid'; reason: string }
  | { kind: 'unavailable'; reason: string };

const KeystoneTokenBody = z.object({
  token: z.object({
    expires_at: z.string(),
    user: z.object({ id: z.string() }),
    project: z.object({ id: z.string() }).optional(),
    roles: z.array(z.object({ name: z.string() })).default([]),
  }),
});

export interface TokenValidatorOptions {
  /** Keystone's URL (clouds.yaml `auth_url`: `http://keystone:5000`, `.../identity` or `.../v3`). */
  authUrl: string;
  /** The service's own token (fetched or renewed as needed). */
  serviceToken: () => Promise<string | null>;
  /** Forgets a refused service token; true when a new one can be fetched. */
  invalidateServiceToken: (token: string | null) => boolean;
  /** How long an answer is kept, in seconds. */
  cacheSeconds: number;
  timeoutMilliseconds: number;
  /** The most answers kept (the oldest are dropped first). */
  cacheEntries?: number;
  now?: () => number;
}

interface CacheEntry {
  validation: TokenValidation;
  until: number;
}

/** `<auth_url>/v3/auth/tokens` (or `<auth_url>/auth/tokens` when it already ends in /v3). */
export function tokensUrl(authUrl: string): string {
  const base = authUrl.replace(/\/+$/, '');
  return /\/v3$/.test(base) ? `${base}/auth/tokens` : `${base}/v3/auth/tokens`;
}

export class KeystoneTokenValidator {
  private readonly cache = new Map<string, CacheEntry>();
  private readonly pending = new Map<string, Promise<TokenValidation>>();
  private readonly url: string;
  private readonly now: () => number;

  constructor(private readonly options: TokenValidatorOptions) {
    this.url = `${tokensUrl(options.authUrl)}?nocatalog`;
    this.now = options.now ?? Date.now;
  }

  /**
   * Validates `token` (cached answers first); no token is invalid. Never throws: Keystone's failures
   * are `unavailable`.
   */
  async validate(token: string | null): Promise<TokenValidation> {
    if (token === null) return { kind: 'invalid', reason: 'no X-Auth-Token' };
    const now = this.now();
    const cached = this.cache.get(token);
    if (cached !== undefined && cached.until > now) {
      if (cached.validation.kind !== 'valid' || cached.validation.token.expiresAtMilliseconds > now)
        return cached.validation;
    }
    const inFlight = this.pending.get(token);
    if (inFlight !== undefined) return inFlight;
    const asked = this.ask(token).finally(() => this.pending.delete(token));
    this.pending.set(token, asked);
    const validation = await asked;
    if (validation.kind !== 'unavailable') this.remember(token, validation);
    return validation;
  }

  private remember(token: string, validation: TokenValidation): void {
    const until = Math.min(
      this.now() + this.options.cacheSeconds * 1000,
      validation.kind === 'valid' ? validation.token.expiresAtMilliseconds : Number.POSITIVE_INFINITY,
    );
    this.cache.delete(token);
    this.cache.set(token, { validation, until });
    const limit = this.options.cacheEntries ?? 10_000;
    while (this.cache.size > limit) this.cache.delete(this.cache.keys().next().value!);
  }

  private async ask(token: string, retried = false): Promise<TokenValidation> {
    let serviceToken: string | null;
    let response: Response;
    try {
      serviceToken = await this.options.serviceToken();
      response = await fetch(this.url, {
        headers: {
          ...(serviceToken === null ? {} : { 'X-Auth-Token': serviceToken }),
          'X-Subject-Token': token,
          Accept: 'application/json',
        },
        signal: AbortSignal.timeout(this.options.timeoutMilliseconds),
      });
    } catch (error) {
      return { kind: 'unavailable', reason: `Keystone could not be asked: ${(error as Error).message}` };
    }
    if (response.status === 401 && !retried && this.options.invalidateServiceToken(serviceToken)) {
      await response.body?.cancel();
      return this.ask(token, true);
    }
    if (response.status === 404 || response.status === 401) {
      await response.body?.cancel();
      return { kind: 'invalid', reason: `Keystone answered ${response.status}` };
    }
    if (response.status !== 200) {
      await response.body?.cancel();
      return { kind: 'unavailable', reason: `Keystone answered ${response.status}` };
    }
    return this.parse(await response.text().catch(() => ''));
  }

  private parse(text: string): TokenValidation {
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return { kind: 'unavailable', reason: 'Keystone answered 200 with a body that is not JSON' };
    }
    const parsed = KeystoneTokenBody.safeParse(body);
    if (!parsed.success)
      return { kind: 'unavailable', reason: `Keystone's token body: ${parsed.error.message}` };
    const { token } = parsed.data;
    const expiresAtMilliseconds = Date.parse(token.expires_at);
    if (Number.isNaN(expiresAtMilliseconds) || expiresAtMilliseconds <= this.now())
      return { kind: 'invalid', reason: 'the token has expired' };
    return {
      kind: 'valid',
      token: {
        userId: token.user.id,
        projectId: token.project?.id ?? null,
        roles: token.roles.map((role) => role.name),
        expiresAtMilliseconds,
      },
    };
  }
}
