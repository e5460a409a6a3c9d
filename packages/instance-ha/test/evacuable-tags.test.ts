import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { Image, Server } from '@lifeguard/openstack';
import {
  type EvacuabilityContext,
  evacuableFlavors,
  evacuableImageIds,
  filterHostsByEvacuableAggregates,
  fnmatchCase,
  hostsInEvacuableAggregates,
  isEvacuableAggregate,
  isEvacuableFlavor,
  isEvacuableImage,
  isServerEvacuable,
  serverExclusion,
  withExtraSpecs,
} from '../src/index.ts';

const T = 'evacuable';

const server = (fields: Record<string, unknown>) =>
  Server.parse({ id: 's', name: 'vm', status: 'ACTIVE', ...fields });
const context = (fields: Partial<EvacuabilityContext>): EvacuabilityContext => ({
  tag: T,
  taggedImages: true,
  taggedFlavors: true,
  evacuableImageIds: new Set(),
  evacuableFlavors: { ids: new Set(), names: new Set() },
  ...fields,
});
const taggedImage = new Set(['img-tagged']);
const taggedFlavor = { ids: new Set(['f-tagged']), names: new Set(['m1.ha']) };
const haFlavor = { original_name: 'm1.ha', extra_specs: { evacuable: 'true' } };
const plainFlavor = { original_name: 'm1.small', extra_specs: {} };

describe('flavor extra specs (docs/instance-ha-rules.md#evacuable-tags)', () => {
  it('matches key T with value true, case-insensitive', () => {
    assert.equal(isEvacuableFlavor({ evacuable: 'true' }, T), true);
    assert.equal(isEvacuableFlavor({ evacuable: 'TRUE' }, T), true);
    assert.equal(isEvacuableFlavor({ evacuable: 'True' }, T), true);
  });

  it('matches any key containing T (trait:CUSTOM_evacuable, aggregate_instance_extra_specs:evacuable)', () => {
    assert.equal(isEvacuableFlavor({ 'trait:CUSTOM_evacuable': 'true' }, T), true);
    assert.equal(isEvacuableFlavor({ 'aggregate_instance_extra_specs:evacuable': 'true' }, T), true);
  });

  it('does not match other values, other keys or empty extra specs', () => {
    assert.equal(isEvacuableFlavor({ evacuable: 'false' }, T), false);
    assert.equal(isEvacuableFlavor({ evacuable: 'yes' }, T), false);
    assert.equal(isEvacuableFlavor({ evacuable: 'truely' }, T), false);
    assert.equal(isEvacuableFlavor({ 'hw:cpu_policy': 'true' }, T), false);
    assert.equal(isEvacuableFlavor({}, T), false);
    assert.equal(isEvacuableFlavor(undefined, T), false);
  });

  it('builds the evacuable flavor set from flavor bodies or looked-up extra specs', () => {
    const flavors = withExtraSpecs(
      [
        { id: '1', name: 'm1.ha', extra_specs: { evacuable: 'true' } },
        { id: '2', name: 'm1.small' },
        { id: '3', name: 'm1.big' },
      ],
      new Map([['2', { 'trait:CUSTOM_evacuable': 'TRUE' }]]),
    );
    const result = evacuableFlavors(flavors, T);
    assert.deepEqual([...result.ids], ['1', '2']);
    assert.deepEqual([...result.names], ['m1.ha', 'm1.small']);
  });
});

describe('image tags and properties (docs/instance-ha-rules.md#evacuable-tags, docs/nova-facts.md#glance-images)', () => {
  it('matches an image tag equal to or containing T', () => {
    assert.equal(isEvacuableImage(Image.parse({ id: 'i', tags: ['evacuable'] }), T), true);
    assert.equal(isEvacuableImage(Image.parse({ id: 'i', tags: ['x-evacuable-y'] }), T), true);
    assert.equal(isEvacuableImage(Image.parse({ id: 'i', tags: ['other'] }), T), false);
  });

  it('matches a Glance custom property (a top-level field) T=true, which InstanceHA missed', () => {
    assert.equal(isEvacuableImage(Image.parse({ id: 'i', tags: [], evacuable: 'true' }), T), true);
    assert.equal(isEvacuableImage(Image.parse({ id: 'i', tags: [], evacuable: 'True' }), T), true);
    assert.equal(isEvacuableImage(Image.parse({ id: 'i', tags: [], evacuable: 'false' }), T), false);
  });

  it('matches a nested properties/metadata mapping too', () => {
    assert.equal(isEvacuableImage({ id: 'i', properties: { evacuable: 'true' } }, T), true);
    assert.equal(isEvacuableImage({ id: 'i', metadata: { x_evacuable: 'TRUE' } }, T), true);
  });

  it("ignores Glance's own fields even when the tag word is in their name", () => {
    assert.equal(isEvacuableImage(Image.parse({ id: 'i', tags: [], protected: true }), 'protect'), false);
  });

  it('takes tagged images from every page given (the caller lists them all)', () => {
    const pages = Array.from({ length: 60 }, (_, index) =>
      Image.parse({ id: `img-${index}`, tags: index === 55 ? ['evacuable'] : [] }),
    );
    assert.deepEqual([...evacuableImageIds(pages, T)], ['img-55']);
  });
});

describe('server decision (docs/instance-ha-rules.md#evacuable-tags is_server_evacuable)', () => {
  it('with TAGGED_IMAGES and TAGGED_FLAVORS both off every server is evacuable', () => {
    const off = context({ taggedImages: false, taggedFlavors: false, evacuableImageIds: taggedImage });
    assert.equal(isServerEvacuable(server({ image: { id: 'other' }, flavor: plainFlavor }), off), true);
  });

  it('fails open: when no enabled kind has any tagged resource, every server is evacuable', () => {
    assert.equal(isServerEvacuable(server({ image: { id: 'x' }, flavor: plainFlavor }), context({})), true);
    // flavors are tagged but TAGGED_FLAVORS is off, images enabled but none tagged → still fail-open
    const flavorsOff = context({ taggedFlavors: false, evacuableFlavors: taggedFlavor });
    assert.equal(isServerEvacuable(server({ image: { id: 'x' }, flavor: plainFlavor }), flavorsOff), true);
  });

  it('once something is tagged, only servers with an evacuable image OR flavor are evacuable', () => {
    const tagged = context({ evacuableImageIds: taggedImage, evacuableFlavors: taggedFlavor });
    assert.equal(
      isServerEvacuable(server({ image: { id: 'img-tagged' }, flavor: plainFlavor }), tagged),
      true,
    );
    assert.equal(isServerEvacuable(server({ image: { id: 'other' }, flavor: haFlavor }), tagged), true);
    assert.equal(isServerEvacuable(server({ image: { id: 'other' }, flavor: plainFlavor }), tagged), false);
  });

  it('never matches a boot-from-volume server by image', () => {
    const imagesOnly = context({ taggedFlavors: false, evacuableImageIds: taggedImage });
    assert.equal(isServerEvacuable(server({ image: '', flavor: haFlavor }), imagesOnly), false);
  });

  it('matches the embedded flavor by composite key and by case-insensitive value', () => {
    const flavorsOnly = context({ taggedImages: false, evacuableFlavors: taggedFlavor });
    const composite = { original_name: 'x', extra_specs: { 'trait:CUSTOM_evacuable': 'TRUE' } };
    assert.equal(isServerEvacuable(server({ flavor: composite }), flavorsOnly), true);
  });

  it('falls back to the flavor name when the server body carries no extra specs', () => {
    const flavorsOnly = context({ taggedImages: false, evacuableFlavors: taggedFlavor });
    assert.equal(isServerEvacuable(server({ flavor: { original_name: 'm1.ha' } }), flavorsOnly), true);
    assert.equal(isServerEvacuable(server({ flavor: { original_name: 'm1.small' } }), flavorsOnly), false);
    assert.equal(isServerEvacuable(server({}), flavorsOnly), false);
  });

  it('honours all 8 combinations of TAGGED_IMAGES / TAGGED_FLAVORS / TAGGED_AGGREGATES', () => {
    const vm = server({ image: { id: 'img-tagged' }, flavor: plainFlavor });
    const aggregates: Array<{ hosts: string[]; metadata: Record<string, string> }> = [
      { hosts: ['compute-0'], metadata: { evacuable: 'true' } },
      { hosts: ['compute-1'], metadata: {} },
    ];
    for (const images of [false, true]) {
      for (const flavors of [false, true]) {
        for (const byAggregate of [false, true]) {
          const decision = isServerEvacuable(
            vm,
            context({
              taggedImages: images,
              taggedFlavors: flavors,
              evacuableImageIds: taggedImage,
              evacuableFlavors: taggedFlavor,
            }),
          );
          // the image is tagged, the flavor is not: evacuable unless only flavors count
          assert.equal(decision, images || !flavors, `images=${images} flavors=${flavors}`);
          const hosts = byAggregate
            ? filterHostsByEvacuableAggregates(['compute-0', 'compute-1'], aggregates, T).kept
            : ['compute-0', 'compute-1'];
          assert.deepEqual(hosts, byAggregate ? ['compute-0'] : ['compute-0', 'compute-1']);
        }
      }
    }
  });
});

describe('aggregates (docs/instance-ha-rules.md#g5-evacuability step 5, docs/instance-ha-rules.md#evacuable-tags)', () => {
  it('an aggregate is evacuable by metadata T (or a key containing T) = true, case-insensitive', () => {
    assert.equal(isEvacuableAggregate({ metadata: { evacuable: 'true' } }, T), true);
    assert.equal(isEvacuableAggregate({ metadata: { evacuable: 'TRUE' } }, T), true);
    assert.equal(isEvacuableAggregate({ metadata: { 'x:evacuable': 'true' } }, T), true);
    assert.equal(isEvacuableAggregate({ metadata: { evacuable: 'false' } }, T), false);
    // the classic agent accepted any value; HEAD requires true
    assert.equal(isEvacuableAggregate({ metadata: { evacuable: '' } }, T), false);
  });

  it('keeps only hosts listed (exact string) in an evacuable aggregate', () => {
    const result = filterHostsByEvacuableAggregates(
      ['compute-0', 'compute-1', 'compute-0.example.com'],
      [{ hosts: ['compute-0'], metadata: { evacuable: 'true' } }],
      T,
    );
    assert.deepEqual(result, {
      kept: ['compute-0'],
      dropped: ['compute-1', 'compute-0.example.com'],
      noTaggedAggregate: false,
    });
  });

  it('fails closed: with no tagged aggregate no host survives', () => {
    const result = filterHostsByEvacuableAggregates(
      ['compute-0'],
      [{ hosts: ['compute-0'], metadata: {} }],
      T,
    );
    assert.deepEqual(result.kept, []);
    assert.equal(result.noTaggedAggregate, true);
  });

  it('lists the hosts of every evacuable aggregate', () => {
    const aggregates: Array<{ hosts: string[]; metadata: Record<string, string> }> = [
      { hosts: ['a', 'b'], metadata: { evacuable: 'true' } },
      { hosts: ['b', 'c'], metadata: { evacuable: 'true' } },
      { hosts: ['d'], metadata: {} },
    ];
    assert.deepEqual([...hostsInEvacuableAggregates(aggregates, T)].sort(), ['a', 'b', 'c']);
  });
});

describe('SKIP_SERVERS_WITH_NAME (fnmatch, case-sensitive)', () => {
  const cases: Array<[string, string]> = [
    ['test-vm', 'test-*'],
    ['test-a/b', 'test-*'],
    ['.hidden', '*'],
    ['vm1', 'vm?'],
    ['vm/', 'vm?'],
    ['vm5', 'vm[0-9]'],
    ['vmx', 'vm[!0-9]'],
    ['vm5', 'vm[!0-9]'],
    ['vm1', 'VM*'],
    ['a', '{a,b}'],
    ['{a,b}', '{a,b}'],
    ['+(a)', '+(a)'],
    ['!x', '!x'],
    ['#x', '#x'],
    ['a\\b', 'a\\*'],
    ['a*', 'a\\*'],
    [']', '[]]'],
    ['a/x/b', '*x*'],
    ['vm[1', 'vm[1'],
    ['b', '[^a]'],
    ['^', '[^a]'],
    ['web.example.com', '*.example.com'],
    ['', ''],
    ['db-prod-01', 'db-*-0?'],
    ['DB-prod-01', 'db-*'],
  ];

  it("agrees with Python's fnmatch.fnmatchcase on every case", () => {
    const script =
      'import fnmatch, json, sys\nprint(json.dumps([fnmatch.fnmatchcase(n, p) for n, p in json.load(sys.stdin)]))';
    const expected = JSON.parse(
      execFileSync('/usr/bin/python3', ['-c', script], { input: JSON.stringify(cases) }).toString(),
    ) as boolean[];
    const actual = cases.map(([name, pattern]) => fnmatchCase(name, pattern));
    cases.forEach(([name, pattern], index) => {
      assert.equal(
        actual[index],
        expected[index],
        `fnmatchcase(${JSON.stringify(name)}, ${JSON.stringify(pattern)})`,
      );
    });
  });

  it('removes matching servers before evacuation and keeps the rest', () => {
    const rules = {
      skipServersWithName: ['test-*', 'tmp?'],
      skipServersInProject: [],
      skipServersWithTag: [],
      skipServersWithMetadata: [],
      evacuableTag: 'evacuable',
    };
    const servers = ['test-1', 'prod-1', 'tmp9', 'Test-2'].map((name) => ({ name, metadata: {} }));
    assert.deepEqual(
      servers.filter((server) => serverExclusion(server, rules) === null).map((each) => each.name),
      ['prod-1', 'Test-2'],
    );
    assert.deepEqual(
      servers.filter((server) => serverExclusion(server, rules)?.reason === 'name').map((each) => each.name),
      ['test-1', 'tmp9'],
    );
  });
});
