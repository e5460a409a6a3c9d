/** `/v1[/{project_id}]/segments/{segment_id}/hosts[/{id}]` (masakari/api/openstack/ha/hosts.py). */
import { HostNotFoundError, HostNotFoundUnderSegmentError, SegmentNotFoundError } from '../../errors.ts';
import type { HostRecord, SegmentRecord } from '../../records.ts';
import type { MasakariStore } from '../../store/masakari-store.ts';
import type { HostFields } from '../../store/segment-writes.ts';
import { pageOf, parseListQuery, strictBoolean } from '../list-query.ts';
import { HOST_CREATE, HOST_UPDATE } from '../request-schemas.ts';
import { canonicalId, isUuidLike } from '../validate-body.ts';
import { hostView, SORT_COLUMNS, TIMESTAMP_COLUMNS } from '../views.ts';
import { bodyBoolean, type Handler, orBadRequest, requireValid, wrapped } from './handler-context.ts';

function changesFrom(host: Record<string, unknown>): Partial<HostFields> {
  const changes: Partial<HostFields> = {};
  if ('name' in host) changes.name = host.name as string;
  if ('type' in host) changes.type = host.type as string | null;
  if ('control_attributes' in host)
    changes.controlAttributes = (host.control_attributes as string | null) ?? '';
  if ('reserved' in host) changes.reserved = bodyBoolean(host.reserved);
  if ('on_maintenance' in host) changes.onMaintenance = bodyBoolean(host.on_maintenance);
  return changes;
}

async function segmentOf(store: MasakariStore, uuid: string): Promise<SegmentRecord> {
  const segment = isUuidLike(uuid) ? await store.getSegment(uuid) : null;
  if (segment === null) throw new SegmentNotFoundError(uuid);
  return segment;
}

function filtered(
  rows: Array<Record<string, unknown>>,
  query: URLSearchParams,
): Array<Record<string, unknown>> {
  let matching = rows;
  for (const field of ['name', 'type', 'control_attributes'] as const) {
    const wanted = query.get(field);
    if (wanted !== null) matching = matching.filter((row) => row[field] === wanted);
  }
  for (const field of ['on_maintenance', 'reserved'] as const) {
    const text = query.get(field);
    if (text === null) continue;
    const wanted = orBadRequest(strictBoolean(text, field));
    matching = matching.filter((row) => row[field] === wanted);
  }
  return matching;
}

async function hostUnder(store: MasakariStore, segmentUuid: string, hostUuid: string): Promise<HostRecord> {
  if (!isUuidLike(hostUuid)) throw new HostNotFoundError(hostUuid);
  const host = await store.getHost(hostUuid);
  if (host === null || host.failoverSegmentId !== segmentUuid)
    throw new HostNotFoundUnderSegmentError(hostUuid, segmentUuid);
  return host;
}

export const hostsHandler: Handler = async (request, { store, writes, checkComputeHost }) => {
  const { route } = request;
  const segmentUuid = canonicalId(route.parentId!);
  const id = canonicalId(route.id ?? '');
  switch (route.action) {
    case 'index': {
      request.authorize();
      const query = orBadRequest(parseListQuery(request.query));
      const segment = await segmentOf(store, segmentUuid);
      const rows = (await store.listSegmentHosts(segment.uuid)).map((host) => hostView(host, segment));
      const columns = [...SORT_COLUMNS.hosts, ...TIMESTAMP_COLUMNS];
      const page = pageOf(filtered(rows, request.query), rows, query, columns);
      return { status: 200, body: { hosts: orBadRequest(page) } };
    }
    case 'show': {
      request.authorize();
      const host = await hostUnder(store, segmentUuid, id);
      return { status: 200, body: { host: hostView(host, await segmentOf(store, segmentUuid)) } };
    }
    case 'create': {
      requireValid(HOST_CREATE, request.body);
      request.authorize();
      const host = wrapped(request.body, 'host');
      const fields: HostFields = {
        name: host.name as string,
        type: host.type as string | null,
        controlAttributes: (host.control_attributes as string | null) ?? '',
        reserved: 'reserved' in host ? bodyBoolean(host.reserved) : false,
        onMaintenance: 'on_maintenance' in host ? bodyBoolean(host.on_maintenance) : false,
      };
      const created = await writes.createHost(segmentUuid, fields, checkComputeHost);
      return { status: 201, body: { host: hostView(created, await segmentOf(store, segmentUuid)) } };
    }
    case 'update': {
      requireValid(HOST_UPDATE, request.body);
      request.authorize();
      const changes = changesFrom(wrapped(request.body, 'host'));
      const updated = await writes.updateHost(segmentUuid, id, changes, checkComputeHost);
      return { status: 200, body: { host: hostView(updated, await segmentOf(store, segmentUuid)) } };
    }
    case 'delete':
      request.authorize();
      await writes.deleteHost(segmentUuid, id);
      return { status: 204, body: null };
  }
};
