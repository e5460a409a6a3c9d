import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { likelyMeant } from '../src/index.ts';

const KNOWN = [
  'POLL',
  'DELTA',
  'THRESHOLD',
  'SMART_EVACUATION',
  'CHECK_KDUMP',
  'KDUMP_TIMEOUT',
  'TAGGED_IMAGES',
  'TAGGED_FLAVORS',
];

describe('likelyMeant: the known config.yaml key an unknown one misspells', () => {
  const cases: Array<[unknown: string, meant: string | null, why: string]> = [
    ['THRESHHOLD', 'THRESHOLD', 'a letter doubled'],
    ['TRESHOLD', 'THRESHOLD', 'a letter dropped'],
    ['poll', 'POLL', 'letter case alone'],
    ['DETLA', 'DELTA', 'two letters swapped (two edits)'],
    ['SMART_EVACUATON', 'SMART_EVACUATION', 'a letter dropped in a long key'],
    ['TAGGED_IMAGE', 'TAGGED_IMAGES', 'the plural dropped'],
    ['POL', 'POLL', 'a letter dropped from a short key'],
    ['PO', null, 'fewer edits than half the key are needed: two letters are too few to tell'],
    ['MY_OWN_KEY', null, 'nothing known is close'],
    ['KDUMP_TIMEOUTS', 'KDUMP_TIMEOUT', 'one letter added'],
    ['CHECK_KDUMPP', 'CHECK_KDUMP', 'one letter added at the end'],
  ];
  for (const [unknown, meant, why] of cases) {
    it(`${unknown} → ${meant ?? 'nothing'} (${why})`, () => {
      assert.equal(likelyMeant(unknown, KNOWN), meant);
    });
  }

  it('takes the closest key, and the first by name among equally close ones', () => {
    assert.equal(likelyMeant('TAGGED_FLAVOR', ['TAGGED_FLAVOURS', 'TAGGED_FLAVORS']), 'TAGGED_FLAVORS');
    assert.equal(likelyMeant('AB_CD', ['AB_CY', 'AB_CX']), 'AB_CX');
  });
});
