/**
 * One request through Masakari's v1 pipeline, in its order (docs/masakari-api.md#1-deployment-shape):
 * size limit (413), Keystone token (401, 503), route (404), microversion (400, 406), content type
 * (415), method (405), JSON body (400), the URL's project id against the token's (400), the method at
 * that microversion (404), then the controller: body validation (400), policy (403) and the call itself.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '@lifeguard/runtime';
import { isAdmin, policyRefusal } from '../auth/policy.ts';
import type { TokenInfo, TokenValidation } from '../auth/token-validator.ts';
import { MasakariError } from '../errors.ts';
import { KEYSTONE_UNAVAILABLE_BODY, UNAUTHORIZED_BODY, UNEXPECTED_ERROR_MESSAGE } from './faults.ts';
import type { Handler, HandlerServices } from './handlers/handler-context.ts';
import { hostsHandler } from './handlers/hosts-handler.ts';
import { notificationsHandler } from './handlers/notifications-handler.ts';
import { segmentsHandler } from './handlers/segments-handler.ts';
import { vmovesHandler } from './handlers/vmoves-handler.ts';
import { faultReply, noRouteReply, type Reply, send, VERSION_HEADER } from './http-responses.ts';
import { chooseMicroversion, type Microversion } from './microversion.ts';
import { notAllowedMessage, policyRule, type ResourceName, type Route, route, servedAt } from './router.ts';
import { versionDocument, versionsDocument } from './versions.ts';

/** webob's HTTPNotFound explanation. */
const NOT_FOUND_MESSAGE = 'The resource could not be found.';

/** oslo.middleware sizelimit's default `max_request_body_size`, in bytes. */
export const MAX_BODY_BYTES = 114_688;

const HANDLERS: Readonly<Record<ResourceName, Handler>> = {
  segments: segmentsHandler,
  hosts: hostsHandler,
  notifications: notificationsHandler,
  vmoves: vmovesHandler,
};
const JSON_TYPES = ['application/json', 'application/vnd.openstack.masakari+json'];

export interface MasakariHttpOptions {
  services: HandlerServices;
  tokens: { validate(token: string | null): Promise<TokenValidation> };
  /** keystonemiddleware's `www_authenticate_uri`: sent in `WWW-Authenticate` with a 401. */
  wwwAuthenticateUri: string;
  logger: Logger;
  /** Masakari's `osapi_masakari_link_prefix`: the base of the version documents' links. */
  linkPrefix?: string | null;
  /** Told of every answered request (for metrics). */
  observe?: (answer: { operation: string; status: number; seconds: number }) => void;
}

class TooLargeError extends Error {}

async function readBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new TooLargeError('Request is too large.');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

function baseUrl(request: IncomingMessage, linkPrefix: string | null | undefined): string {
  if (linkPrefix) return linkPrefix.replace(/\/+$/, '');
  const forwarded = request.headers['x-forwarded-proto'];
  const scheme = typeof forwarded === 'string' ? forwarded.split(',')[0]!.trim() : 'http';
  return `${scheme}://${request.headers.host ?? 'localhost'}`;
}

function contentTypeProblem(request: IncomingMessage, body: Buffer): boolean {
  const header = request.headers['content-type'];
  if (body.length === 0 || header === undefined) return false;
  const type = header.split(';')[0]!.trim().toLowerCase();
  return type !== '' && type !== 'text/plain' && !JSON_TYPES.includes(type);
}

type Authenticated = { kind: 'caller'; caller: TokenInfo } | { kind: 'reply'; reply: Reply };

async function authenticate(request: IncomingMessage, options: MasakariHttpOptions): Promise<Authenticated> {
  const token = request.headers['x-auth-token'];
  const unauthorized: Reply = {
    status: 401,
    body: UNAUTHORIZED_BODY,
    headers: { 'WWW-Authenticate': `Keystone uri="${options.wwwAuthenticateUri}"` },
  };
  const validation = await options.tokens.validate(typeof token === 'string' && token !== '' ? token : null);
  if (validation.kind === 'valid') return { kind: 'caller', caller: validation.token };
  if (validation.kind === 'invalid') return { kind: 'reply', reply: unauthorized };
  options.logger.error({ reason: validation.reason }, 'a token could not be validated: Keystone unavailable');
  return { kind: 'reply', reply: { status: 503, body: KEYSTONE_UNAVAILABLE_BODY } };
}

function parseJson(body: Buffer): { ok: true; value: unknown } | { ok: false } {
  if (body.length === 0) return { ok: true, value: null };
  try {
    return { ok: true, value: JSON.parse(body.toString('utf8')) };
  } catch {
    return { ok: false };
  }
}

async function callHandler(
  matched: Extract<Route, { kind: 'resource' }>,
  version: Microversion,
  url: URL,
  body: unknown,
  caller: TokenInfo,
  options: MasakariHttpOptions,
): Promise<Reply> {
  // A resource newer than the request's microversion: Masakari's answer for a versioned method.
  if (!servedAt(matched.resource, version)) return faultReply(404, NOT_FOUND_MESSAGE, version);
  const rule = policyRule(matched.resource, matched.action);
  const authorize = () => {
    if (!isAdmin(caller.roles)) throw new MasakariError(403, policyRefusal(rule));
  };
  try {
    const answer = await HANDLERS[matched.resource](
      { route: matched, version, query: url.searchParams, body, authorize },
      options.services,
    );
    return { status: answer.status, body: answer.body, version };
  } catch (error) {
    if (error instanceof MasakariError) return faultReply(error.status, error.message, version);
    options.logger.error({ err: error, operation: rule }, 'unexpected error in a Masakari API call');
    return faultReply(500, UNEXPECTED_ERROR_MESSAGE, version);
  }
}

/** The answer to one request under `/v1`. */
async function answerV1(
  request: IncomingMessage,
  url: URL,
  matched: Route,
  options: MasakariHttpOptions,
): Promise<Reply> {
  const declared = Number(request.headers['content-length'] ?? '0');
  if (declared > MAX_BODY_BYTES) return faultReply(413, 'Request is too large.');
  const authenticated = await authenticate(request, options);
  if (authenticated.kind === 'reply') return authenticated.reply;
  if (matched.kind === 'not-found' || matched.kind === 'versions') return noRouteReply();
  const header = request.headers[VERSION_HEADER.toLowerCase()];
  const choice = chooseMicroversion(Array.isArray(header) ? header.join(',') : header);
  if (choice.kind === 'malformed') return faultReply(400, choice.message);
  if (choice.kind === 'unsupported') return faultReply(406, choice.message, choice.version);
  const version = choice.version;
  const body = await readBody(request);
  if (contentTypeProblem(request, body)) return faultReply(415, 'Unsupported Content-Type', version);
  if (matched.kind === 'not-allowed')
    return faultReply(405, notAllowedMessage(matched.method, matched.action), version);
  if (matched.kind === 'version')
    return { status: 200, body: versionDocument(`${baseUrl(request, options.linkPrefix)}`), version };
  const parsed = parseJson(body);
  if (!parsed.ok) return faultReply(400, 'Malformed request body', version);
  const caller = authenticated.caller;
  if (matched.projectId !== null && matched.projectId !== caller.projectId) {
    const message = `Malformed request URL: URL's project_id '${matched.projectId}' doesn't match Context's project_id '${caller.projectId}'`;
    return faultReply(400, message, version);
  }
  return callHandler(matched, version, url, parsed.value, caller, options);
}

/** The `http.Server` request listener of the Masakari API. */
export function masakariRequestListener(options: MasakariHttpOptions) {
  return (request: IncomingMessage, response: ServerResponse): void => {
    const started = process.hrtime.bigint();
    const requestId = `req-${randomUUID()}`;
    const url = new URL(request.url ?? '/', 'http://masakari.invalid');
    const matched = route(request.method ?? 'GET', url.pathname);
    const answer =
      matched.kind === 'versions'
        ? Promise.resolve<Reply>({
            status: 200,
            body: versionsDocument(baseUrl(request, options.linkPrefix)),
          })
        : url.pathname.startsWith('/v1')
          ? answerV1(request, url, matched, options)
          : Promise.resolve(noRouteReply());
    answer
      .catch((error: unknown) => {
        if (error instanceof TooLargeError) return faultReply(413, 'Request is too large.');
        options.logger.error({ err: error }, 'unexpected error answering a Masakari API request');
        return faultReply(500, UNEXPECTED_ERROR_MESSAGE);
      })
      .then((reply) => {
        send(response, reply, requestId);
        const seconds = Number(process.hrtime.bigint() - started) / 1e9;
        const operation =
          matched.kind === 'resource' ? policyRule(matched.resource, matched.action) : matched.kind;
        options.observe?.({ operation, status: reply.status, seconds });
        options.logger.debug(
          { method: request.method, path: url.pathname, status: reply.status, requestId },
          'Masakari API request',
        );
      });
  };
}
