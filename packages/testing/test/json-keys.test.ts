import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { repeatedJsonKeys } from '../src/index.ts';

describe('repeatedJsonKeys', () => {
  const cases: Array<[string, string, string[]]> = [
    ['every key once', '{"level":40,"queue":"q","msg":"m"}', []],
    ['a top-level key twice', '{"queue":"q","reason":"r","queue":"q"}', ['queue']],
    ['a nested key twice, named with its path', '{"err":{"code":1,"code":2},"msg":"m"}', ['err.code']],
    ['the same key in sibling objects is fine', '{"a":{"x":1},"b":{"x":2}}', []],
    ['objects in an array are each their own', '{"list":[{"x":1},{"x":2}]}', []],
    ['a key-like text inside a string is not a key', '{"msg":"\\"queue\\": twice","queue":"q"}', []],
    ['escaped quotes do not end a string early', '{"a":"x\\"","a":"y"}', ['a']],
    ['values that repeat are not keys', '{"a":"b","c":"b"}', []],
  ];
  for (const [name, text, expected] of cases) {
    it(name, () => assert.deepEqual(repeatedJsonKeys(text), expected));
  }
});
