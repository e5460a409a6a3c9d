/** `/v1[/{project_id}]/segments[/{id}]` (masakari/api/openstack/ha/segments.py). */
import { SegmentNotFoundError } from '../../errors.ts';
import type { RecoveryMethod, SegmentRecord } from '../../records.ts';
import type { SegmentFields } from '../../store/segment-writes.ts';
import { pageOf, parseListQuery, strictBoolean } from '../list-query.ts';
import { atLeast } from '../microversion.ts';
import { SEGMENT_CREATE, SEGMENT_UPDATE } from '../request-schemas.ts';
import { canonicalId, isUuidLike } from '../validate-body.ts';
import { SORT_COLUMNS, segmentView, TIMESTAMP_COLUMNS } from '../views.ts';
import { bodyBoolean, type Handler, orBadRequest, requireValid, wrapped } from './handler-context.ts';

const V12 = { major: 1, minor: 2 };

function changesFrom(segment: Record<string, unknown>): Partial<SegmentFields> {
  const changes: Partial<SegmentFields> = {};
  if ('name' in segment) changes.name = segment.name as string;
  if ('description' in segment) changes.description = segment.description as string | null;
  if ('service_type' in segment) changes.serviceType = segment.service_type as string;
  if ('recovery_method' in segment) changes.recoveryMethod = segment.recovery_method as RecoveryMethod;
  if ('enabled' in segment) changes.enabled = bodyBoolean(segment.enabled);
  return changes;
}

async function existing(
  uuid: string,
  read: (uuid: string) => Promise<SegmentRecord | null>,
): Promise<SegmentRecord> {
  const segment = isUuidLike(uuid) ? await read(uuid) : null;
  if (segment === null) throw new SegmentNotFoundError(uuid);
  return segment;
}

export const segmentsHandler: Handler = async (request, { store, writes }) => {
  const { route, version } = request;
  const id = canonicalId(route.id ?? '');
  switch (route.action) {
    case 'index': {
      request.authorize();
      const query = orBadRequest(parseListQuery(request.query));
      const rows = (await store.read.segments()).map(segmentView);
      let matching = rows;
      for (const field of ['recovery_method', 'service_type'] as const) {
        const wanted = request.query.get(field);
        if (wanted !== null) matching = matching.filter((row) => row[field] === wanted);
      }
      const enabled = request.query.get('enabled');
      if (enabled !== null) {
        const wanted = orBadRequest(strictBoolean(enabled, 'enabled'));
        matching = matching.filter((row) => row.enabled === wanted);
      }
      const columns = [...SORT_COLUMNS.segments, ...TIMESTAMP_COLUMNS];
      return { status: 200, body: { segments: orBadRequest(pageOf(matching, rows, query, columns)) } };
    }
    case 'show':
      request.authorize();
      return {
        status: 200,
        body: { segment: segmentView(await existing(id, (uuid) => store.getSegment(uuid))) },
      };
    case 'create': {
      requireValid(atLeast(version, V12) ? SEGMENT_CREATE.v12 : SEGMENT_CREATE.v10, request.body);
      request.authorize();
      const segment = wrapped(request.body, 'segment');
      const created = await writes.createSegment({
        name: segment.name as string,
        description: (segment.description as string | null | undefined) ?? null,
        serviceType: segment.service_type as string,
        recoveryMethod: segment.recovery_method as RecoveryMethod,
        enabled: 'enabled' in segment ? bodyBoolean(segment.enabled) : true,
      });
      return { status: 201, body: { segment: segmentView(created) } };
    }
    case 'update': {
      requireValid(atLeast(version, V12) ? SEGMENT_UPDATE.v12 : SEGMENT_UPDATE.v10, request.body);
      request.authorize();
      const updated = await writes.updateSegment(id, changesFrom(wrapped(request.body, 'segment')));
      return { status: 200, body: { segment: segmentView(updated) } };
    }
    case 'delete':
      request.authorize();
      await writes.deleteSegment(id);
      return { status: 204, body: null };
  }
};
