import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type ExcludableServer,
  parseMetadataMatch,
  type ServerExclusionRules,
  serverExclusion,
} from '../src/index.ts';

const none: ServerExclusionRules = {
  skipServersWithName: [],
  skipServersInProject: [],
  skipServersWithTag: [],
  skipServersWithMetadata: [],
  evacuableTag: 'evacuable',
};
const server = (extra: Partial<ExcludableServer> = {}): ExcludableServer => ({
  name: 'web-1',
  metadata: {},
  tenant_id: 'p-web',
  tags: [],
  ...extra,
});

describe('server exclusions (docs/instance-ha-rules.md#server-exclusions)', () => {
  const cases: ReadonlyArray<{
    name: string;
    server: ExcludableServer;
    rules: Partial<ServerExclusionRules>;
    expected: [string, string] | null;
  }> = [
    { name: 'no rule', server: server(), rules: {}, expected: null },
    {
      name: 'a name glob',
      server: server({ name: 'amphora-1' }),
      rules: { skipServersWithName: ['db-*', 'amphora-*'] },
      expected: ['name', 'name matches SKIP_SERVERS_WITH_NAME "amphora-*"'],
    },
    {
      name: 'a project id',
      server: server({ tenant_id: 'p-octavia' }),
      rules: { skipServersInProject: ['p-octavia'] },
      expected: ['project', 'project p-octavia is in SKIP_SERVERS_IN_PROJECT'],
    },
    {
      name: 'another project',
      server: server(),
      rules: { skipServersInProject: ['p-octavia'] },
      expected: null,
    },
    {
      name: 'a project name Keystone resolved to its tenant_id',
      server: server({ tenant_id: 'p-octavia' }),
      rules: { skipServersInProject: ['octavia'], namedProjects: new Map([['p-octavia', 'octavia']]) },
      expected: ['project', 'project p-octavia ("octavia") is in SKIP_SERVERS_IN_PROJECT'],
    },
    {
      name: 'a resolved name of another project',
      server: server({ tenant_id: 'p-web' }),
      rules: { skipServersInProject: ['octavia'], namedProjects: new Map([['p-octavia', 'octavia']]) },
      expected: null,
    },
    {
      name: 'a name that is no longer listed is not matched even if resolved',
      server: server({ tenant_id: 'p-octavia' }),
      rules: { skipServersInProject: ['trove'], namedProjects: new Map([['p-octavia', 'octavia']]) },
      expected: null,
    },
    {
      name: 'a server without tenant_id is not matched by project',
      server: server({ tenant_id: undefined }),
      rules: { skipServersInProject: ['p-web'] },
      expected: null,
    },
    {
      name: 'one of its tags',
      server: server({ tags: ['web', 'router'] }),
      rules: { skipServersWithTag: ['router'] },
      expected: ['tag', 'tag "router" is in SKIP_SERVERS_WITH_TAG'],
    },
    {
      name: 'tags are compared exactly (Nova tags are case-sensitive)',
      server: server({ tags: ['Router'] }),
      rules: { skipServersWithTag: ['router'] },
      expected: null,
    },
    {
      name: 'a metadata key with that value',
      server: server({ metadata: { owner: 'trove' } }),
      rules: { skipServersWithMetadata: ['owner=trove'] },
      expected: ['metadata', 'metadata owner=trove (SKIP_SERVERS_WITH_METADATA)'],
    },
    {
      name: 'the key with another value',
      server: server({ metadata: { owner: 'nova' } }),
      rules: { skipServersWithMetadata: ['owner=trove'] },
      expected: null,
    },
    {
      name: 'an empty value matches an empty value only',
      server: server({ metadata: { pinned: '' } }),
      rules: { skipServersWithMetadata: ['pinned='] },
      expected: ['metadata', 'metadata pinned= (SKIP_SERVERS_WITH_METADATA)'],
    },
    {
      name: 'its own evacuable=false, in any case',
      server: server({ metadata: { evacuable: ' FALSE' } }),
      rules: {},
      expected: ['evacuable-false', 'its metadata says evacuable= FALSE'],
    },
    {
      name: 'its own evacuable=false under EVACUABLE_TAG',
      server: server({ metadata: { ha: 'false', evacuable: 'false' } }),
      rules: { evacuableTag: 'ha' },
      expected: ['evacuable-false', 'its metadata says ha=false'],
    },
    {
      name: 'evacuable=true is no exclusion',
      server: server({ metadata: { evacuable: 'true' } }),
      rules: {},
      expected: null,
    },
    {
      name: 'the first rule in order wins: name before project before tag',
      server: server({ name: 'lb-1', tenant_id: 'p-octavia', tags: ['amphora'] }),
      rules: {
        skipServersWithName: ['lb-*'],
        skipServersInProject: ['p-octavia'],
        skipServersWithTag: ['amphora'],
      },
      expected: ['name', 'name matches SKIP_SERVERS_WITH_NAME "lb-*"'],
    },
  ];
  for (const { name, server: subject, rules, expected } of cases) {
    it(name, () => {
      const exclusion = serverExclusion(subject, { ...none, ...rules });
      assert.deepEqual(exclusion === null ? null : [exclusion.reason, exclusion.detail], expected);
    });
  }

  it('splits SKIP_SERVERS_WITH_METADATA items at the first =, refusing an item without one or an empty key', () => {
    assert.deepEqual(parseMetadataMatch(' owner = trove '), { key: 'owner', value: 'trove' });
    assert.deepEqual(parseMetadataMatch('a=b=c'), { key: 'a', value: 'b=c' });
    assert.equal(parseMetadataMatch('owner'), null);
    assert.equal(parseMetadataMatch(' =x'), null);
  });
});
