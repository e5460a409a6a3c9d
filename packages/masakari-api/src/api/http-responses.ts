/**
 * Writing responses as Masakari's WSGI stack writes them: JSON bodies, the request id header, the
 * microversion headers (`masakari X.Y` on success, `instance-ha X.Y` on a fault) and the fault
 * envelope.
 */
import type { ServerResponse } from 'node:http';
import { faultBody } from './faults.ts';
import { type Microversion, microversionText } from './microversion.ts';

export const VERSION_HEADER = 'OpenStack-API-Version';

export interface Reply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
  /** Set when the reply is a fault: its content type then carries the charset. */
  fault?: boolean;
  /** The request's microversion when it was read: adds the version headers. */
  version?: Microversion | null;
  /** A body sent as it is (text/plain), for webob's bare answers. */
  text?: string;
}

export function faultReply(status: number, message: string, version: Microversion | null = null): Reply {
  return { status, body: faultBody(status, message), fault: true, version };
}

/** webob's bare 404 for a path no route matches (not Masakari's fault envelope). */
export function noRouteReply(): Reply {
  return { status: 404, body: null, text: '404 Not Found\n\nThe resource could not be found.\n\n   ' };
}

export function send(response: ServerResponse, reply: Reply, requestId: string): void {
  const headers: Record<string, string> = { 'x-openstack-request-id': requestId, ...reply.headers };
  if (reply.version) {
    headers[VERSION_HEADER] =
      `${reply.fault ? 'instance-ha' : 'masakari'} ${microversionText(reply.version)}`;
    headers.Vary = VERSION_HEADER;
  }
  let payload = '';
  if (reply.text !== undefined) {
    headers['Content-Type'] = 'text/plain; charset=UTF-8';
    payload = reply.text;
  } else if (reply.status !== 204) {
    headers['Content-Type'] = reply.fault ? 'application/json; charset=UTF-8' : 'application/json';
    payload = JSON.stringify(reply.body);
  }
  headers['Content-Length'] = String(Buffer.byteLength(payload));
  response.writeHead(reply.status, headers);
  response.end(payload);
}
