import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InvalidArgumentError } from '@commander-js/extra-typings';
import { positiveWholeNumber } from '../src/command-arguments.ts';

describe('positiveWholeNumber (counts and limits on the command line)', () => {
  const accepted: Array<[string, number]> = [
    ['1', 1],
    ['6', 6],
    [' 12 ', 12],
    ['9007199254740991', 9007199254740991],
  ];
  for (const [value, number] of accepted) {
    it(`reads ${JSON.stringify(value)} as ${number}`, () => assert.equal(positiveWholeNumber(value), number));
  }
  const refused = [
    '0',
    '-3',
    '1.5',
    '5.0',
    '1e1',
    '0x10',
    '0b11',
    '',
    'many',
    '99999999999999999999',
    'Infinity',
  ];
  for (const value of refused) {
    it(`refuses ${JSON.stringify(value)}`, () =>
      assert.throws(
        () => positiveWholeNumber(value),
        (error: unknown) => error instanceof InvalidArgumentError && /whole number ≥ 1/.test(error.message),
      ));
  }
});
