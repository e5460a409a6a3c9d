import { setTimeout } from 'node:timers/promises';
import type { Logger } from '@lifeguard/runtime';
import type { AuthProvider } from '../auth/auth-provider.ts';
import {
  EndpointUnreachableError,
  GlanceApiError,
  NovaApiError,
  OpenStackApiError,
  type OpenStackService,
  UnexpectedResponseError,
} from '../errors.ts';
import { faultMessage } from './fault-body.ts';
import { type ExchangeAnswer, exchange } from './http-exchange.ts';
import { currentRequestSignal } from './request-signal.ts';
import {
  backoffDelay,
  DEFAULT_RETRY_POLICY,
  failedBeforeSending,
  isRetryableStatus,
  isTransientConflict,
  type RetryPolicy,
} from './retry-policy.ts';
import { scrubSecrets } from './scrub-secrets.ts';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH' | 'HEAD';

export interface TransportRequest {
  method: HttpMethod;
  /** The full URL. */
  url: string;
  /** How the call is named in errors and logs: `PUT /os-services/{id}`, `GET /servers/detail`. */
  operation: string;
  headers?: Record<string, string>;
  /** Sent as JSON. */
  body?: unknown;
  /** Overrides the method's idempotency (GET/PUT/DELETE/HEAD are idempotent, POST/PATCH are not). */
  idempotent?: boolean;
}

export interface TransportResponse {
  status: number;
  headers: Headers;
  /** The parsed JSON body, or null for an empty body. */
  body: unknown;
  /** `x-openstack-request-id` (or Nova's `x-compute-request-id`), or null. */
  requestId: string | null;
}

export interface TransportOptions {
  service: OpenStackService;
  auth: AuthProvider;
  /** Per-request timeout in milliseconds (default 30000; clouds.yaml `api_timeout` is in seconds). */
  timeoutMilliseconds?: number;
  retry?: Partial<RetryPolicy>;
  logger?: Logger;
}

/** What a service client passes on to its transport: everything but the service. */
export type ServiceTransportOptions = Omit<TransportOptions, 'service'>;

/**
 * The transport of a service client: `service` with the client's auth, timeout (milliseconds),
 * retry policy and logger, taken from `options` (the client's other options are not passed on).
 */
export function serviceTransport(
  service: OpenStackService,
  options: ServiceTransportOptions,
): OpenStackTransport {
  const { auth, timeoutMilliseconds, retry, logger } = options;
  return new OpenStackTransport({ service, auth, timeoutMilliseconds, retry, logger });
}

const IDEMPOTENT: ReadonlySet<HttpMethod> = new Set(['GET', 'PUT', 'DELETE', 'HEAD']);

/**
 * HTTP to one OpenStack service through node:http(s) (exchange): JSON in and out, the auth token in
 * `X-Auth-Token` (one re-authentication and retry after a 401), a timeout per attempt, retries with
 * back-off as RetryPolicy describes (the whole call, retries included, cut short by the signal of a
 * surrounding withRequestSignal), and typed errors: NovaApiError / GlanceApiError (status, the
 * service's message, request id) for HTTP errors, EndpointUnreachableError when the service cannot be
 * reached, UnexpectedResponseError for a 2xx body that is not JSON (an idempotent call asks again
 * first, as for a lost answer). Tokens and passwords are never
 * logged and are scrubbed from every message it builds.
 */
export class OpenStackTransport {
  readonly service: OpenStackService;
  private readonly auth: AuthProvider;
  private readonly timeoutMilliseconds: number;
  private readonly retry: RetryPolicy;
  private readonly logger: Logger | undefined;

  constructor(options: TransportOptions) {
    this.service = options.service;
    this.auth = options.auth;
    this.timeoutMilliseconds = options.timeoutMilliseconds ?? 30_000;
    this.retry = { ...DEFAULT_RETRY_POLICY, ...options.retry };
    this.logger = options.logger;
  }

  /**
   * Sends the request, retrying as RetryPolicy says.
   * @throws NovaApiError | GlanceApiError | OpenStackApiError for HTTP errors (after retries)
   * @throws EndpointUnreachableError when no answer came (after retries)
   * @throws KeystoneAuthError when a token cannot be obtained
   */
  async request(request: TransportRequest): Promise<TransportResponse> {
    const idempotent = request.idempotent ?? IDEMPOTENT.has(request.method);
    const started = Date.now();
    const bound = currentRequestSignal();
    let reauthenticated = false;
    for (let attempt = 1; ; attempt++) {
      bound?.throwIfAborted();
      const token = await this.auth.token();
      let answer: ExchangeAnswer;
      try {
        answer = await this.send(request, token, bound);
      } catch (error) {
        bound?.throwIfAborted();
        const retryable = idempotent || failedBeforeSending(error);
        if (retryable && attempt < this.retry.attempts) {
          await this.retryLater(request, attempt, 'OpenStack endpoint not reachable; retrying', {
            error: this.scrub(String(error)),
          });
          continue;
        }
        throw new EndpointUnreachableError(
          this.service,
          this.scrub(request.url),
          request.operation,
          attempt,
          Date.now() - started,
          error,
        );
      }
      const { status, headers, text } = answer;
      const requestId = headers.get('x-openstack-request-id') ?? headers.get('x-compute-request-id');
      this.logger?.debug(
        { service: this.service, operation: request.operation, status, requestId, attempt },
        'OpenStack call',
      );
      if (status === 401 && !reauthenticated && this.auth.invalidate(token)) {
        reauthenticated = true;
        attempt--;
        continue;
      }
      if (status >= 400) {
        const message = this.scrub(faultMessage(status, text));
        const retryable =
          isRetryableStatus(status, idempotent) || (status === 409 && isTransientConflict(message));
        if (retryable && attempt < this.retry.attempts) {
          const retryAfter = headers.get('retry-after');
          await this.retryLater(
            request,
            attempt,
            'OpenStack call failed; retrying',
            {
              status,
              requestId,
              message,
            },
            retryAfter,
          );
          continue;
        }
        throw this.apiError(request.operation, status, message, requestId);
      }
      const body = parseJson(text);
      if (body.ok) return { status, headers, body: body.value, requestId };
      // A 2xx whose body is cut or not JSON (a proxy's page, a connection closed mid-body): the
      // answer is lost, so an idempotent call asks again; a POST may have acted and is not repeated.
      const problem = `not JSON: ${this.scrub(faultMessage(status, text)).slice(0, 200)}`;
      if (idempotent && attempt < this.retry.attempts) {
        await this.retryLater(request, attempt, 'OpenStack answer unreadable; retrying', {
          status,
          requestId,
          message: problem,
        });
        continue;
      }
      throw new UnexpectedResponseError(this.service, request.operation, status, problem, requestId);
    }
  }

  /** One attempt: the request with the token, JSON headers and the per-attempt timeout; the whole body read. */
  private async send(
    request: TransportRequest,
    token: string | null,
    bound: AbortSignal | undefined,
  ): Promise<ExchangeAnswer> {
    const headers: Record<string, string> = { accept: 'application/json', ...request.headers };
    if (token !== null) headers['x-auth-token'] = token;
    if (request.body !== undefined) headers['content-type'] ??= 'application/json';
    return exchange({
      method: request.method,
      url: request.url,
      headers,
      ...(request.body === undefined
        ? {}
        : { body: typeof request.body === 'string' ? request.body : JSON.stringify(request.body) }),
      signal: bound
        ? AbortSignal.any([AbortSignal.timeout(this.timeoutMilliseconds), bound])
        : AbortSignal.timeout(this.timeoutMilliseconds),
    });
  }

  /** Logs the retry at warn with what went wrong, then waits the back-off (Retry-After when given). */
  private async retryLater(
    request: TransportRequest,
    attempt: number,
    message: string,
    details: Record<string, unknown>,
    retryAfter: string | null = null,
  ): Promise<void> {
    const delay = backoffDelay(this.retry, attempt, retryAfter);
    this.logger?.warn(
      { service: this.service, operation: request.operation, attempt, delayMilliseconds: delay, ...details },
      message,
    );
    await sleep(delay, currentRequestSignal());
  }

  private apiError(
    operation: string,
    status: number,
    message: string,
    requestId: string | null,
  ): OpenStackApiError {
    if (this.service === 'compute') return new NovaApiError(operation, status, message, requestId);
    if (this.service === 'image') return new GlanceApiError(operation, status, message, requestId);
    return new OpenStackApiError(this.service, operation, status, message, requestId);
  }

  private scrub(text: string): string {
    return scrubSecrets(text, this.auth.secrets());
  }
}

/** Waits, or rejects with the bound's reason as soon as it aborts (withRequestSignal). */
const sleep = (milliseconds: number, bound: AbortSignal | undefined) =>
  setTimeout(milliseconds, undefined, bound ? { signal: bound } : {}).catch((error: unknown) => {
    bound?.throwIfAborted();
    throw error;
  });

/** The parsed JSON of a body (null for an empty one), or not ok when it is not JSON. */
function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  if (text.trim() === '') return { ok: true, value: null };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}
