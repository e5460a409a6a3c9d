import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type EvacuabilityContext, selectInstances } from '@lifeguard/instance-ha';
import { Server } from '@lifeguard/openstack';
import { orchestratedPhases, restartPriority, singlePhase } from '../src/index.ts';

const server = (id: string, status: string, extra: Record<string, unknown> = {}) =>
  Server.parse({ id, name: id, status, ...extra });

const noExclusions = {
  skipServersWithName: [],
  skipServersInProject: [],
  skipServersWithTag: [],
  skipServersWithMetadata: [],
  evacuableTag: 'evacuable',
};
const noTags = { resume: false, exclusions: noExclusions, evacuability: null };

describe('which instances are evacuated (docs/instance-ha-rules.md#evacuation)', () => {
  it('keeps ACTIVE, ERROR and SHUTOFF and leaves PAUSED, SUSPENDED, SHELVED and REBUILD', () => {
    const servers = ['ACTIVE', 'ERROR', 'SHUTOFF', 'PAUSED', 'SUSPENDED', 'SHELVED_OFFLOADED', 'REBUILD'].map(
      (status, index) => server(`vm-${index}`, status),
    );
    const selection = selectInstances(servers, noTags);
    assert.deepEqual(
      selection.selected.map((each) => each.status),
      ['ACTIVE', 'ERROR', 'SHUTOFF'],
    );
    assert.deepEqual(
      selection.wrongStatus.map((each) => each.status),
      ['PAUSED', 'SUSPENDED', 'SHELVED_OFFLOADED', 'REBUILD'],
    );
  });

  it('takes REBUILD instances too when resuming', () => {
    const selection = selectInstances([server('a', 'REBUILD'), server('b', 'ACTIVE')], {
      ...noTags,
      resume: true,
    });
    assert.deepEqual(
      selection.selected.map((each) => each.id),
      ['a', 'b'],
    );
  });

  it('drops servers matching a SKIP_SERVERS_WITH_NAME glob, case-sensitively', () => {
    const servers = [
      server('db-1', 'ACTIVE'),
      server('DB-2', 'ACTIVE'),
      server('web-1', 'ACTIVE'),
      server('test7', 'ACTIVE'),
    ];
    const selection = selectInstances(servers, {
      ...noTags,
      exclusions: { ...noExclusions, skipServersWithName: ['db-*', 'test?'] },
    });
    assert.deepEqual(
      selection.selected.map((each) => each.id),
      ['DB-2', 'web-1'],
    );
    assert.deepEqual(
      selection.excluded.map((each) => [each.server.id, each.exclusion.reason]),
      [
        ['db-1', 'name'],
        ['test7', 'name'],
      ],
    );
  });

  it('keeps only evacuable servers (image or flavor tagged) when tagging is in effect', () => {
    const context: EvacuabilityContext = {
      tag: 'evacuable',
      taggedImages: true,
      taggedFlavors: true,
      evacuableImageIds: new Set(['image-tagged']),
      evacuableFlavors: { ids: new Set(['f1']), names: new Set(['m1.ha']) },
    };
    const servers = [
      server('by-image', 'ACTIVE', { image: { id: 'image-tagged' }, flavor: { extra_specs: {} } }),
      server('by-flavor', 'ACTIVE', {
        image: { id: 'other' },
        flavor: { extra_specs: { evacuable: 'True' } },
      }),
      server('neither', 'ACTIVE', { image: { id: 'other' }, flavor: { extra_specs: {} } }),
    ];
    const selection = selectInstances(servers, { ...noTags, evacuability: context });
    assert.deepEqual(
      selection.selected.map((each) => each.id),
      ['by-image', 'by-flavor'],
    );
    assert.deepEqual(
      selection.notEvacuable.map((each) => each.id),
      ['neither'],
    );
    assert.equal(selection.taggingApplied, true);
  });

  it('evacuates everything when nothing of an enabled kind is tagged (fail-open)', () => {
    const context: EvacuabilityContext = {
      tag: 'evacuable',
      taggedImages: true,
      taggedFlavors: true,
      evacuableImageIds: new Set(),
      evacuableFlavors: { ids: new Set(), names: new Set() },
    };
    const selection = selectInstances([server('a', 'ACTIVE', { image: { id: 'x' } })], {
      ...noTags,
      evacuability: context,
    });
    assert.equal(selection.selected.length, 1);
    assert.equal(selection.taggingApplied, false);
  });
});

describe('ORCHESTRATED_RESTART phases (docs/instance-ha-rules.md#orchestrated_restart)', () => {
  const tagged = (id: string, metadata: Record<string, string>) => server(id, 'ACTIVE', { metadata });

  it('parses priorities as integers clamped to 1–1000, 500 when missing or invalid', () => {
    assert.equal(restartPriority({ 'instanceha:restart_priority': ' 700 ' }), 700);
    assert.equal(restartPriority({ 'instanceha:restart_priority': '5000' }), 1000);
    assert.equal(restartPriority({ 'instanceha:restart_priority': '0' }), 1);
    assert.equal(restartPriority({ 'instanceha:restart_priority': '7.5' }), 500);
    assert.equal(restartPriority({}), 500);
  });

  it('groups by restart_group with the highest member priority, one phase per ungrouped server, descending', () => {
    const servers = [
      tagged('web-1', { 'instanceha:restart_group': 'web', 'instanceha:restart_priority': '100' }),
      tagged('db-1', { 'instanceha:restart_group': 'db', 'instanceha:restart_priority': '900' }),
      tagged('web-2', { 'instanceha:restart_group': 'web', 'instanceha:restart_priority': '300' }),
      tagged('lonely', { 'instanceha:restart_priority': '300' }),
      tagged('default', {}),
      tagged('db-2', { 'instanceha:restart_group': 'db' }),
    ];
    const { phases, tagged: anyTagged } = orchestratedPhases(servers);
    assert.equal(anyTagged, true);
    assert.deepEqual(
      phases.map((phase) => [phase.priority, phase.group, phase.servers.map((each) => each.id)]),
      [
        [900, 'db', ['db-1', 'db-2']],
        [500, null, ['default']],
        [300, 'web', ['web-1', 'web-2']],
        [300, null, ['lonely']],
      ],
    );
  });

  it('reports untagged servers (InstanceHA warns) and smart mode has a single phase', () => {
    assert.equal(orchestratedPhases([server('a', 'ACTIVE')]).tagged, false);
    assert.deepEqual(singlePhase([]), []);
    assert.equal(singlePhase([1, 2, 3])[0]!.servers.length, 3);
  });
});
