/**
 * Masakari's routes (docs/masakari-api.md#2-url-forms-and-routing): every v1 resource with and
 * without a project id segment, hosts nested under their segment and vmoves under their
 * notification, a `.json` suffix tolerated, no PATCH. Pure: a method and a path in, what to do out.
 */
import { atLeast, type Microversion } from './microversion.ts';

export type ResourceName = 'segments' | 'hosts' | 'notifications' | 'vmoves';
export type Action = 'index' | 'create' | 'show' | 'update' | 'delete';

export type Route =
  | { kind: 'versions' }
  | { kind: 'version'; projectId: null }
  | {
      kind: 'resource';
      resource: ResourceName;
      action: Action;
      projectId: string | null;
      /** The id of the resource it is nested under: a host's segment, a vmove's notification. */
      parentId: string | null;
      id: string | null;
    }
  /** A route that exists but has no such method on its controller (PUT or DELETE of a notification, a vmove): 405. */
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

/** Masakari's controllers with methods for GET only (405 for the other routed methods). */
const READ_ONLY: Readonly<Partial<Record<ResourceName, ReadonlyArray<Action>>>> = {
  notifications: ['index', 'create', 'show'],
  vmoves: ['index', 'show'],
};

function nestedRoute(
  method: string,
  projectId: string | null,
  [collection, parentId, nested, id]: string[],
): Route {
  const resource =
    collection === 'segments' && nested === 'hosts'
      ? 'hosts'
      : collection === 'notifications' && nested === 'vmoves'
        ? 'vmoves'
        : null;
  const action = id === undefined ? COLLECTION_ACTIONS[method] : MEMBER_ACTIONS[method];
  if (resource === null || action === undefined) return { kind: 'not-found' };
  return { kind: 'resource', resource, action, projectId, parentId: parentId!, id: id ?? null };
}

function resourceRoute(method: string, projectId: string | null, parts: string[]): Route {
  const [collection, id, nested, ...rest] = parts;
  if (rest.length > 1) return { kind: 'not-found' };
  let found: Route;
  if (nested !== undefined) found = nestedRoute(method, projectId, parts);
  else if (collection !== 'segments' && collection !== 'notifications') found = { kind: 'not-found' };
  else {
    const action = id === undefined ? COLLECTION_ACTIONS[method] : MEMBER_ACTIONS[method];
    found =
      action === undefined
        ? { kind: 'not-found' }
        : { kind: 'resource', resource: collection, action, projectId, parentId: null, id: id ?? null };
  }
  if (found.kind !== 'resource') return found;
  const allowed = READ_ONLY[found.resource];
  if (allowed !== undefined && !allowed.includes(found.action))
    return { kind: 'not-allowed', method, action: found.action };
  return found;
}

/** The microversion each resource appeared in: vmoves in 1.3, the others in 1.0. */
const INTRODUCED_IN: Readonly<Partial<Record<ResourceName, Microversion>>> = {
  vmoves: { major: 1, minor: 3 },
};

/**
 * Whether a resource's methods exist at `version`. Below its version Masakari answers as for a
 * method its controller does not have at that version: 404 `The resource could not be found.`
 */
export function servedAt(resource: ResourceName, version: Microversion): boolean {
  const introduced = INTRODUCED_IN[resource];
  return introduced === undefined || atLeast(version, introduced);
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
