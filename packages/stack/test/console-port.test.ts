import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { consolePort, DEFAULT_CONSOLE_PORT } from '../src/console-process.ts';

describe("the console's port under npm start", () => {
  const cases: Array<[string, NodeJS.ProcessEnv, 'default' | 'free' | number, number | 'free']> = [
    ['9430 by default', {}, 'default', DEFAULT_CONSOLE_PORT],
    ['after the workers with --http-port-base 19400 and 5 workers', {}, 19_400, 19_405],
    ['a free one with --http-port-base 0', {}, 'free', 'free'],
    ['LIFEGUARD_STACK_CONSOLE_PORT over everything', { LIFEGUARD_STACK_CONSOLE_PORT: '9999' }, 19_400, 9999],
  ];
  for (const [name, env, httpPorts, expected] of cases) {
    it(name, () => assert.equal(consolePort(env, httpPorts, 5), expected));
  }
});
