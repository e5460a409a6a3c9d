/**
 * Masakari's routes (docs/masakari-api.md#2-url-forms-and-routing): every v1 resource with and
 * without a project id segment, hosts nested under their segment, a `.json` suffix tolerated, no
 * PATCH. Pure: a method and a path in, what to do out.
 */

export type ResourceName = 'segments' | 'hosts' | 'notifications';
export type Action = 'index' | 'create' | 'show' | 'update' | 'delete';

export type Route =
  | { kind: 'versions' }
  | { kind: 'version'; projectId: null }
  | {
      kind: 'resource';
      resource: ResourceName;
      action: Action;
      projectId: string | null;
      segmentId: string | null;
      id: string | null;
    }
  /** A route that exists but has no such method on its controller (PUT or DELETE of a notification): 405. */
  | { kind: 'not-allowed'; method: string; action: Action }
  | { kind: 'not-found' };

/** The project id segment Masakari's router accepts (`[osapi_v1] project_id_regex`). */
const PROJECT_ID = /^[0-9a-f-]+$/;

const COLLECTION_ACTIONS: Readonly<Record<string, Action>> = { GET: 'index', POST: 'create' };
const MEMBER_ACTIONS: Readonly<Record<string, Action>> = { GET: 'show', PUT: 'update', DELETE: 'delete' };

/** The policy rule of an action, as Masakari names it (os_masakari_api:<resource>:<verb>). */
export function policyRule(resource: ResourceName, action: Action): string {
  const verb = action === 'show' ? 'detail' : action;
  const name = resource === 'hosts' ? 'os-hosts' : resource;
  return `os_masakari_api:${name}:${verb}`;
}

function decode(part: string): string | null {
  try {
    return decodeURIComponent(part);
  } catch {
    return null;
  }
}

function resourceRoute(method: string, projectId: string | null, parts: string[]): Route {
  const [collection, id, nested, hostId, ...rest] = parts;
  if (rest.length > 0) return { kind: 'not-found' };
  const member = MEMBER_ACTIONS[method];
  const onCollection = COLLECTION_ACTIONS[method];
  if (collection === 'segments' && nested === 'hosts') {
    const action = hostId === undefined ? onCollection : member;
    if (action === undefined) return { kind: 'not-found' };
    return { kind: 'resource', resource: 'hosts', action, projectId, segmentId: id!, id: hostId ?? null };
  }
  if (nested !== undefined) return { kind: 'not-found' };
  if (collection !== 'segments' && collection !== 'notifications') return { kind: 'not-found' };
  const action = id === undefined ? onCollection : member;
  if (action === undefined) return { kind: 'not-found' };
  if (collection === 'notifications' && (action === 'update' || action === 'delete'))
    return { kind: 'not-allowed', method, action };
  return { kind: 'resource', resource: collection, action, projectId, segmentId: null, id: id ?? null };
}

/** The route of a request (`path` without the query string). */
export function route(method: string, path: string): Route {
  if (path === '/' || path === '') return method === 'GET' ? { kind: 'versions' } : { kind: 'not-found' };
  const raw = path.replace(/\/+$/, '').split('/').slice(1);
  const decoded = raw.map(decode);
  if (decoded.some((part) => part === null || part === '')) return { kind: 'not-found' };
  const parts = decoded as string[];
  if (parts[0] !== 'v1') return { kind: 'not-found' };
  const last = parts.length - 1;
  if (last > 0 && parts[last]!.endsWith('.json')) parts[last] = parts[last]!.slice(0, -'.json'.length);
  if (parts.length === 1)
    return method === 'GET' ? { kind: 'version', projectId: null } : { kind: 'not-found' };
  const second = parts[1]!;
  if (parts.length > 2 && PROJECT_ID.test(second)) return resourceRoute(method, second, parts.slice(2));
  return resourceRoute(method, null, parts.slice(1));
}

/** The message of Masakari's 405 for a method its controller lacks. */
export function notAllowedMessage(method: string, action: Action): string {
  return `The request method: '${method}' with action: '${action}' is not allowed on this resource`;
}
