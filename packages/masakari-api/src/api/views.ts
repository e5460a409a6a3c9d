/**
 * Records as Masakari's JSON shows them (docs/masakari-api.md#6-representations): snake_case keys,
 * the integer `id` next to the uuid, the host's full segment nested, `recovery_workflow_details`
 * only where asked for.
 */
import type {
  HostRecord,
  NotificationRecord,
  RecoveryWorkflowDetail,
  SegmentRecord,
  VmoveRecord,
} from '../records.ts';

export function segmentView(segment: SegmentRecord): Record<string, unknown> {
  return {
    id: segment.id,
    uuid: segment.uuid,
    name: segment.name,
    description: segment.description,
    service_type: segment.serviceType,
    recovery_method: segment.recoveryMethod,
    enabled: segment.enabled,
    created_at: segment.createdAt,
    updated_at: segment.updatedAt,
    deleted_at: segment.deletedAt,
    deleted: segment.deleted,
  };
}

export function hostView(host: HostRecord, segment: SegmentRecord): Record<string, unknown> {
  return {
    id: host.id,
    uuid: host.uuid,
    name: host.name,
    failover_segment_id: host.failoverSegmentId,
    failover_segment: segmentView(segment),
    type: host.type,
    reserved: host.reserved,
    control_attributes: host.controlAttributes,
    on_maintenance: host.onMaintenance,
    created_at: host.createdAt,
    updated_at: host.updatedAt,
    deleted_at: host.deletedAt,
    deleted: host.deleted,
  };
}

function workflowDetailView(detail: RecoveryWorkflowDetail): Record<string, unknown> {
  return {
    name: detail.name,
    state: detail.state,
    progress: detail.progress,
    progress_details: detail.progressDetails.map((line) => ({ ...line })),
  };
}

/** A notification; with `withDetails` (show at 1.1 and later) its recovery_workflow_details too. */
export function notificationView(
  notification: NotificationRecord,
  withDetails = false,
): Record<string, unknown> {
  return {
    id: notification.id,
    notification_uuid: notification.notificationUuid,
    generated_time: notification.generatedTime,
    type: notification.type,
    payload: notification.payload,
    source_host_uuid: notification.sourceHostUuid,
    status: notification.status,
    created_at: notification.createdAt,
    updated_at: notification.updatedAt,
    deleted_at: notification.deletedAt,
    deleted: notification.deleted,
    ...(withDetails
      ? { recovery_workflow_details: notification.recoveryWorkflowDetails.map(workflowDetailView) }
      : {}),
  };
}

/** A vmove, with the keys in the order of Masakari's api samples. */
export function vmoveView(vmove: VmoveRecord): Record<string, unknown> {
  return {
    created_at: vmove.createdAt,
    updated_at: vmove.updatedAt,
    deleted_at: vmove.deletedAt,
    deleted: vmove.deleted,
    id: vmove.id,
    uuid: vmove.uuid,
    notification_uuid: vmove.notificationUuid,
    instance_uuid: vmove.instanceUuid,
    instance_name: vmove.instanceName,
    source_host: vmove.sourceHost,
    dest_host: vmove.destHost,
    start_time: vmove.startTime,
    end_time: vmove.endTime,
    status: vmove.status,
    type: vmove.type,
    message: vmove.message,
  };
}

/** The columns each list may be sorted by (the table's columns in Masakari's database). */
export const SORT_COLUMNS = {
  segments: ['id', 'uuid', 'name', 'description', 'service_type', 'recovery_method', 'enabled'],
  hosts: [
    'id',
    'uuid',
    'name',
    'failover_segment_id',
    'type',
    'reserved',
    'control_attributes',
    'on_maintenance',
  ],
  notifications: [
    'id',
    'notification_uuid',
    'generated_time',
    'type',
    'payload',
    'source_host_uuid',
    'status',
  ],
  vmoves: [
    'id',
    'uuid',
    'notification_uuid',
    'instance_uuid',
    'instance_name',
    'source_host',
    'dest_host',
    'start_time',
    'end_time',
    'type',
    'status',
    'message',
  ],
} as const;
export const TIMESTAMP_COLUMNS = ['created_at', 'updated_at', 'deleted_at', 'deleted'] as const;
