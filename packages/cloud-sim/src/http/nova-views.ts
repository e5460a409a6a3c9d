import { createHash } from 'node:crypto';
import type { CloudModel } from '../model/cloud-model.ts';
import type { SimAggregate, SimFlavor, SimHost, SimMigration, SimServer } from '../model/records.ts';
import { isoSeconds, novaTimestamp } from '../model/time-format.ts';
import { atLeast } from './microversion.ts';

/** Nova's server status from vm_state and task_state (nova/api/openstack/common.py `_STATE_MAP`). */
export function serverStatus(server: SimServer): string {
  const rebuilding = server.taskState !== null && /^rebuild/.test(server.taskState);
  switch (server.vmState) {
    case 'active':
      return rebuilding ? 'REBUILD' : 'ACTIVE';
    case 'stopped':
      return rebuilding ? 'REBUILD' : 'SHUTOFF';
    case 'error':
      return rebuilding ? 'REBUILD' : 'ERROR';
    case 'building':
      return 'BUILD';
    case 'paused':
      return 'PAUSED';
    case 'suspended':
      return 'SUSPENDED';
    case 'shelved_offloaded':
      return 'SHELVED_OFFLOADED';
  }
}

function links(base: string, kind: string, id: string | number) {
  const root = base.replace(/\/v2\.1$/, '');
  return [
    { rel: 'self', href: `${base}/${kind}/${id}` },
    { rel: 'bookmark', href: `${root}/${kind}/${id}` },
  ];
}

/** A server as `GET /servers/detail` shows it to an admin at microversion `mv`. */
export function serverView(
  model: CloudModel,
  server: SimServer,
  mv: string,
  base: string,
): Record<string, unknown> {
  const view: Record<string, unknown> = {
    id: server.id,
    name: server.name,
    status: serverStatus(server),
    tenant_id: server.tenantId,
    user_id: server.userId,
    metadata: server.metadata,
    hostId: server.host ? hostIdOf(server.host, server.tenantId) : '',
    image: {
      id: server.imageId,
      links: [{ rel: 'bookmark', href: `${base.replace(/\/v2\.1$/, '')}/images/${server.imageId}` }],
    },
    flavor: atLeast(mv, '2.47') ? { ...server.flavor } : { id: server.flavor.original_name, links: [] },
    created: isoSeconds(server.createdAt),
    updated: isoSeconds(server.updatedAt),
    addresses: {},
    accessIPv4: '',
    accessIPv6: '',
    links: links(base, 'servers', server.id),
    'OS-DCF:diskConfig': 'MANUAL',
    progress: 0,
    'OS-EXT-AZ:availability_zone': server.availabilityZone,
    config_drive: '',
    key_name: null,
    'OS-SRV-USG:launched_at': server.launchedAt === null ? null : novaTimestamp(server.launchedAt),
    'OS-SRV-USG:terminated_at': null,
    'OS-EXT-SRV-ATTR:host': server.host,
    'OS-EXT-SRV-ATTR:instance_name': `instance-${server.instanceNumber.toString(16).padStart(8, '0')}`,
    'OS-EXT-SRV-ATTR:hypervisor_hostname': server.host,
    'OS-EXT-STS:task_state': server.taskState,
    'OS-EXT-STS:vm_state': server.vmState,
    'OS-EXT-STS:power_state': server.powerState,
    'os-extended-volumes:volumes_attached': [],
    locked: server.locked,
  };
  if (atLeast(mv, '2.73')) view.locked_reason = server.lockedReason;
  if (atLeast(mv, '2.16')) view.host_status = model.hostStatus(server);
  if (atLeast(mv, '2.19')) view.description = null;
  if (atLeast(mv, '2.26')) view.tags = [...server.tags];
  if (server.vmState === 'error' && server.fault !== null) {
    view.fault = {
      code: server.fault.code,
      message: server.fault.message,
      details: 'simulated: no trace',
      created: isoSeconds(server.fault.created),
    };
  }
  return view;
}

const hostIds = new Map<string, string>();

/** Nova's `hostId`: sha224 of project id and host name (hex), cached. */
function hostIdOf(host: string, project: string): string {
  const key = `${project}${host}`;
  let value = hostIds.get(key);
  if (value === undefined) {
    value = createHash('sha224').update(key).digest('hex');
    hostIds.set(key, value);
  }
  return value;
}

/** A compute service (`os-services`): UUID id from 2.53, `forced_down` from 2.11. */
export function computeServiceView(
  model: CloudModel,
  host: SimHost,
  mv: string,
  keepFraction = false,
): Record<string, unknown> {
  const view: Record<string, unknown> = {
    binary: 'nova-compute',
    host: host.name,
    id: atLeast(mv, '2.53') ? host.serviceId : host.serviceNumber,
    zone: model.zoneOf(host.name),
    status: host.disabled ? 'disabled' : 'enabled',
    state: model.serviceIsUp(host) ? 'up' : 'down',
    updated_at: novaTimestamp(model.serviceUpdatedAt(host), keepFraction),
    disabled_reason: host.disabledReason,
  };
  if (atLeast(mv, '2.11')) view.forced_down = host.forcedDown;
  return view;
}

/** nova-conductor / nova-scheduler on the controller: always up, zone `internal`. */
export function controlServiceView(
  model: CloudModel,
  service: CloudModel['controlServices'][number],
  mv: string,
): Record<string, unknown> {
  const interval = model.settings.reportIntervalSeconds * 1000;
  const now = model.now();
  const view: Record<string, unknown> = {
    binary: service.binary,
    host: 'controller',
    id: atLeast(mv, '2.53') ? service.serviceId : service.serviceNumber,
    zone: 'internal',
    status: 'enabled',
    state: 'up',
    updated_at: novaTimestamp(
      service.createdAt + Math.floor((now - service.createdAt) / interval) * interval,
    ),
    disabled_reason: null,
  };
  if (atLeast(mv, '2.11')) view.forced_down = false;
  return view;
}

/** A hypervisor (`os-hypervisors/detail`), 2.53+ shape; usage figures until 2.88. */
export function hypervisorView(
  model: CloudModel,
  host: SimHost,
  mv: string,
  detail: boolean,
  withServers: boolean,
): Record<string, unknown> {
  const view: Record<string, unknown> = {
    id: atLeast(mv, '2.53') ? host.hypervisorId : host.serviceNumber,
    hypervisor_hostname: host.name,
    state: model.serviceIsUp(host) ? 'up' : 'down',
    status: host.disabled ? 'disabled' : 'enabled',
  };
  if (withServers) {
    view.servers = model.servers.onHost(host.name).map((server) => ({
      name: `instance-${server.instanceNumber.toString(16).padStart(8, '0')}`,
      uuid: server.id,
    }));
  }
  if (!detail) return view;
  Object.assign(view, {
    hypervisor_type: 'fake',
    hypervisor_version: 1000,
    host_ip: host.hostIp,
    service: {
      id: atLeast(mv, '2.53') ? host.serviceId : host.serviceNumber,
      host: host.name,
      disabled_reason: host.disabledReason,
    },
  });
  if (!atLeast(mv, '2.88')) {
    const usage = model.servers.usageOnHost(host.name);
    const used = { vcpus: usage.vcpus, ram: usage.ram + 512, disk: usage.disk };
    Object.assign(view, {
      vcpus: 1000,
      memory_mb: 800000,
      local_gb: 600000,
      vcpus_used: used.vcpus,
      memory_mb_used: used.ram,
      local_gb_used: used.disk,
      free_ram_mb: 800000 - used.ram,
      free_disk_gb: 600000 - used.disk,
      current_workload: 0,
      running_vms: usage.count,
      disk_available_least: 0,
    });
  }
  return view;
}

/** A migration record: `uuid` from 2.59, `migration_type` from 2.23. */
export function migrationView(migration: SimMigration, mv: string): Record<string, unknown> {
  const view: Record<string, unknown> = {
    id: migration.id,
    source_compute: migration.sourceCompute,
    dest_compute: migration.destCompute,
    source_node: migration.sourceCompute,
    dest_node: migration.destCompute,
    dest_host: migration.destHost,
    old_instance_type_id: null,
    new_instance_type_id: null,
    instance_uuid: migration.instanceUuid,
    status: migration.status,
    created_at: novaTimestamp(migration.createdAt),
    updated_at: novaTimestamp(migration.updatedAt),
  };
  if (atLeast(mv, '2.59')) view.uuid = migration.uuid;
  if (atLeast(mv, '2.23')) view.migration_type = migration.migrationType;
  return view;
}

/** An aggregate (`os-aggregates`): `uuid` from 2.41. */
export function aggregateView(
  aggregate: SimAggregate,
  mv: string,
  withHosts = true,
): Record<string, unknown> {
  const view: Record<string, unknown> = {
    id: aggregate.id,
    name: aggregate.name,
    created_at: novaTimestamp(aggregate.createdAt),
    updated_at: aggregate.updatedAt === null ? null : novaTimestamp(aggregate.updatedAt),
    deleted_at: null,
    deleted: false,
    availability_zone: aggregate.availabilityZone,
  };
  if (withHosts) {
    view.hosts = [...aggregate.hosts];
    view.metadata = { ...aggregate.metadata };
  }
  if (atLeast(mv, '2.41')) view.uuid = aggregate.uuid;
  return view;
}

/** A flavor (`flavors/detail`): `extra_specs` from 2.61, `description` from 2.55. */
export function flavorView(flavor: SimFlavor, mv: string, base: string): Record<string, unknown> {
  const view: Record<string, unknown> = {
    id: flavor.id,
    name: flavor.name,
    ram: flavor.ram,
    disk: flavor.disk,
    swap: flavor.swap === 0 ? '' : flavor.swap,
    'OS-FLV-EXT-DATA:ephemeral': flavor.ephemeral,
    'OS-FLV-DISABLED:disabled': false,
    vcpus: flavor.vcpus,
    'os-flavor-access:is_public': flavor.isPublic,
    rxtx_factor: 1.0,
    links: links(base, 'flavors', flavor.id),
  };
  if (atLeast(mv, '2.55')) view.description = flavor.description;
  if (atLeast(mv, '2.61')) view.extra_specs = { ...flavor.extraSpecs };
  return view;
}
