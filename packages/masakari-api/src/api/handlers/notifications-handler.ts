/** `/v1[/{project_id}]/notifications[/{id}]` (masakari/api/openstack/ha/notifications.py). */
import { MasakariError, NotificationNotFoundError } from '../../errors.ts';
import type { NotificationType } from '../../records.ts';
import { parseDateTime } from '../../timestamps.ts';
import { pageOf, parseListQuery } from '../list-query.ts';
import { atLeast } from '../microversion.ts';
import { NOTIFICATION_CREATE, PAYLOAD_SCHEMAS } from '../request-schemas.ts';
import { canonicalId, isUuidLike } from '../validate-body.ts';
import { notificationView, SORT_COLUMNS, TIMESTAMP_COLUMNS } from '../views.ts';
import { type Handler, orBadRequest, requireValid, wrapped } from './handler-context.ts';

const V11 = { major: 1, minor: 1 };

function filtered(
  rows: Array<Record<string, unknown>>,
  query: URLSearchParams,
): Array<Record<string, unknown>> {
  let matching = rows;
  for (const field of ['status', 'source_host_uuid', 'type'] as const) {
    const wanted = query.get(field);
    if (wanted !== null) matching = matching.filter((row) => row[field] === wanted);
  }
  const since = query.get('generated-since');
  if (since !== null) {
    const parsed = parseDateTime(since);
    if (parsed === null) throw new MasakariError(400, 'Invalid generated-since value');
    matching = matching.filter((row) => (row.generated_time as string) >= parsed.timestamp);
  }
  return matching;
}

export const notificationsHandler: Handler = async (request, services) => {
  const { route, version } = request;
  const { store } = services;
  switch (route.action) {
    case 'create': {
      requireValid(NOTIFICATION_CREATE, request.body);
      const notification = wrapped(request.body, 'notification');
      const type = notification.type as NotificationType;
      requireValid(PAYLOAD_SCHEMAS[type], notification.payload);
      request.authorize();
      const created = await store.createNotification(
        {
          type,
          hostname: notification.hostname as string,
          generatedTime: parseDateTime(notification.generated_time as string)!,
          payload: notification.payload as Record<string, string>,
        },
        services.duplicateSeconds,
      );
      await services.enqueue(created);
      return { status: 202, body: { notification: notificationView(created) } };
    }
    case 'index': {
      request.authorize();
      const query = orBadRequest(parseListQuery(request.query));
      const rows = (await store.listNotifications()).map((record) => notificationView(record));
      const columns = [...SORT_COLUMNS.notifications, ...TIMESTAMP_COLUMNS];
      const page = pageOf(filtered(rows, request.query), rows, query, columns);
      return { status: 200, body: { notifications: orBadRequest(page) } };
    }
    case 'show': {
      request.authorize();
      const id = canonicalId(route.id!);
      const found = isUuidLike(id) ? await store.getNotification(id) : null;
      if (found === null) throw new NotificationNotFoundError(id);
      return { status: 200, body: { notification: notificationView(found, atLeast(version, V11)) } };
    }
    default:
      throw new MasakariError(404, 'The resource could not be found.');
  }
};
