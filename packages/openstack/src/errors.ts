import { ConfigError, type ConfigProblem } from '@lifeguard/runtime';

/** The OpenStack service an error came from (catalog service type). */
export type OpenStackService = 'compute' | 'image' | 'identity';

const SERVICE_NAMES: Record<OpenStackService, string> = {
  compute: 'Nova',
  image: 'Glance',
  identity: 'Keystone',
};

/** Nova's/Glance's/Keystone's name for a service type, for messages: `compute` → `Nova`. */
export function serviceName(service: OpenStackService): string {
  return SERVICE_NAMES[service];
}

/**
 * An OpenStack API answered with an HTTP error status. Keeps the status, the service's own message
 * (from the fault body: Nova's `{"badRequest": {"code": 400, "message": "..."}}`, Keystone's
 * `{"error": {...}}`, or the text of an HTML page), and the `x-openstack-request-id` header, so an
 * operator can find the call in the service's logs. Never holds a token, a password or a request body.
 */
export class OpenStackApiError extends Error {
  constructor(
    readonly service: OpenStackService,
    /** HTTP method and path of the call, e.g. `POST /servers/<id>/action`. */
    readonly operation: string,
    /** The HTTP status (400, 404, 409, 500, ...). */
    readonly status: number,
    /** The service's message, or `HTTP <status>` when the body had none. */
    readonly apiMessage: string,
    /** The `x-openstack-request-id` response header (`req-<uuid>`), or null. */
    readonly requestId: string | null,
  ) {
    super(
      `${serviceName(service)} ${operation} failed with HTTP ${status}: ${apiMessage}${requestId ? ` (request ${requestId})` : ''}`,
    );
    this.name = 'OpenStackApiError';
  }
}

/** Nova (the Compute API) answered with an HTTP error status; see OpenStackApiError. */
export class NovaApiError extends OpenStackApiError {
  constructor(operation: string, status: number, apiMessage: string, requestId: string | null) {
    super('compute', operation, status, apiMessage, requestId);
    this.name = 'NovaApiError';
  }
}

/** Glance (the Image API) answered with an HTTP error status; see OpenStackApiError. */
export class GlanceApiError extends OpenStackApiError {
  constructor(operation: string, status: number, apiMessage: string, requestId: string | null) {
    super('image', operation, status, apiMessage, requestId);
    this.name = 'GlanceApiError';
  }
}

/**
 * Keystone refused to issue a token (wrong credentials: 401; unknown project or domain: 401/404;
 * malformed request: 400), or its answer had no usable token or catalog entry. The message names the
 * auth URL, the auth type and Keystone's message, never the password or secret.
 */
export class KeystoneAuthError extends Error {
  constructor(
    readonly authUrl: string,
    readonly authType: string,
    /** Keystone's HTTP status, or null when the problem is in the answer (no token, no endpoint). */
    readonly status: number | null,
    readonly detail: string,
    readonly requestId: string | null = null,
  ) {
    super(
      `Keystone authentication (${authType}) at ${authUrl} failed${status === null ? '' : ` with HTTP ${status}`}: ${detail}${requestId ? ` (request ${requestId})` : ''}`,
    );
    this.name = 'KeystoneAuthError';
  }
}

/**
 * The cloud configuration (clouds.yaml, secure.yaml, OS_* variables) is invalid or incomplete.
 * A ConfigError: `problems` name each key (`clouds.mycloud.auth.auth_url`) and its file.
 */
export class CloudConfigError extends ConfigError {
  constructor(problems: ReadonlyArray<ConfigProblem>) {
    super(problems);
    this.name = 'CloudConfigError';
  }
}

/**
 * An OpenStack endpoint could not be reached (connection refused, DNS failure, timeouts) after the
 * bounded number of attempts.
 */
export class EndpointUnreachableError extends Error {
  constructor(
    readonly service: OpenStackService,
    readonly url: string,
    readonly operation: string,
    readonly attempts: number,
    readonly elapsedMilliseconds: number,
    cause: unknown,
  ) {
    super(
      `${serviceName(service)} is not reachable at ${url} (${operation}): ${describeNetworkError(cause)}; gave up after ${attempts} attempt${attempts === 1 ? '' : 's'} in ${elapsedMilliseconds} ms`,
      { cause },
    );
    this.name = 'EndpointUnreachableError';
  }
}

/** Nova's microversion range does not include one lifeguard can use (2.53 or later). */
export class MicroversionNotSupportedError extends Error {
  constructor(
    readonly endpoint: string,
    readonly minimum: string,
    readonly maximum: string,
  ) {
    super(
      `Nova at ${endpoint} supports microversions ${minimum} to ${maximum}; lifeguard needs 2.53 or later (compute services and hypervisors by UUID, PUT /os-services/{id}), between 2.53 and 2.94`,
    );
    this.name = 'MicroversionNotSupportedError';
  }
}

/** An OpenStack API answered 2xx with a body lifeguard cannot read (not JSON, or the wrong shape). */
export class UnexpectedResponseError extends Error {
  constructor(
    readonly service: OpenStackService,
    readonly operation: string,
    readonly status: number,
    readonly problem: string,
    readonly requestId: string | null,
  ) {
    super(
      `${serviceName(service)} ${operation} answered HTTP ${status} with an unexpected body: ${problem}${requestId ? ` (request ${requestId})` : ''}`,
    );
    this.name = 'UnexpectedResponseError';
  }
}

/** `ECONNREFUSED`, `request timed out after 30000 ms`, ... from a network failure. */
export function describeNetworkError(error: unknown): string {
  if (error instanceof Error) {
    if (error.name === 'TimeoutError') return error.message;
    const cause = (error as { cause?: unknown }).cause;
    if (cause && typeof cause === 'object') {
      const code = (cause as { code?: unknown }).code;
      const message = (cause as { message?: unknown }).message;
      if (typeof code === 'string' && typeof message === 'string') return `${code}: ${message}`;
      if (typeof message === 'string') return message;
    }
    return error.message;
  }
  return String(error);
}
