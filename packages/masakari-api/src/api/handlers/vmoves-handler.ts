/**
 * `/v1[/{project_id}]/notifications/{notification_id}/vmoves[/{vmove_id}]` (Masakari 15's
 * masakari/api/openstack/ha/vmoves.py, microversion 1.3): the instances a COMPUTE_HOST
 * notification's recovery moved. The list takes Masakari's `status` and `type` filters, sort, limit
 * and marker; a notification of another type has no vmoves (400).
 */
import {
  MasakariError,
  NotificationNotFoundError,
  NotificationWithoutVmovesError,
  VmoveNotFoundError,
} from '../../errors.ts';
import type { NotificationRecord } from '../../records.ts';
import type { MasakariStore } from '../../store/masakari-store.ts';
import { pageOf, parseListQuery } from '../list-query.ts';
import { canonicalId, isUuidLike } from '../validate-body.ts';
import { SORT_COLUMNS, TIMESTAMP_COLUMNS, vmoveView } from '../views.ts';
import { type Handler, orBadRequest } from './handler-context.ts';

/** The notification the vmoves belong to: 404 when there is none, 400 when it is not COMPUTE_HOST. */
async function hostNotification(store: MasakariStore, notificationId: string): Promise<NotificationRecord> {
  const uuid = canonicalId(notificationId);
  const notification = isUuidLike(uuid) ? await store.getNotification(uuid) : null;
  if (notification === null) throw new NotificationNotFoundError(uuid);
  if (notification.type !== 'COMPUTE_HOST') throw new NotificationWithoutVmovesError(uuid);
  return notification;
}

function filtered(
  rows: Array<Record<string, unknown>>,
  query: URLSearchParams,
): Array<Record<string, unknown>> {
  let matching = rows;
  for (const field of ['status', 'type'] as const) {
    const wanted = query.get(field);
    if (wanted !== null) matching = matching.filter((row) => row[field] === wanted);
  }
  return matching;
}

export const vmovesHandler: Handler = async (request, services) => {
  const { route } = request;
  const { store } = services;
  switch (route.action) {
    case 'index': {
      request.authorize();
      const query = orBadRequest(parseListQuery(request.query));
      const notification = await hostNotification(store, route.parentId!);
      const rows = (await store.listVmoves(notification.notificationUuid)).map(vmoveView);
      const columns = [...SORT_COLUMNS.vmoves, ...TIMESTAMP_COLUMNS];
      const page = pageOf(filtered(rows, request.query), rows, query, columns);
      return { status: 200, body: { vmoves: orBadRequest(page) } };
    }
    case 'show': {
      request.authorize();
      const notification = await hostNotification(store, route.parentId!);
      const id = canonicalId(route.id!);
      const found = isUuidLike(id) ? await store.getVmove(id) : null;
      if (found === null || found.notificationUuid !== notification.notificationUuid)
        throw new VmoveNotFoundError(id);
      return { status: 200, body: { vmove: vmoveView(found) } };
    }
    default:
      throw new MasakariError(404, 'The resource could not be found.');
  }
};
