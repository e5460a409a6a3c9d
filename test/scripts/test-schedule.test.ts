// Which test files the runner starts beside which (scripts/test-schedule.mjs): a file's own
// declaration, the real-Nova lane, the choice of the next file to start and the priority it runs at.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Placement } from '../../scripts/test-schedule.mjs';
import {
  BACKGROUND_NICE,
  nextToStart,
  niceOf,
  offerOrder,
  placementOf,
  TestFileDeclarationError,
} from '../../scripts/test-schedule.mjs';

const free: Placement = { alone: false, lane: null };
const alone: Placement = { alone: true, lane: null };
const lane = (name: string): Placement => ({ alone: false, lane: name });

describe('placementOf', () => {
  const cases: [string, string, string, Placement][] = [
    ['no declaration', 'a.test.ts', "import assert from 'node:assert';\n", free],
    ['a harness file is in the real-nova lane', 'b.real-nova.test.ts', '', lane('real-nova')],
    ['a Keystone harness file too', 'b.real-keystone.test.ts', '', lane('real-nova')],
    [
      'runs alone, with its reason',
      'c.test.ts',
      '// first line\n// test-file: runs alone (changes the shared Redis maxmemory)\n',
      alone,
    ],
    [
      'a lane of its own',
      'd.test.ts',
      '// test-file: lane suite-engines (restarts the suite Redis)\n',
      lane('suite-engines'),
    ],
    [
      'a declaration past line 40 is not read',
      'e.test.ts',
      `${'\n'.repeat(45)}// test-file: runs alone (too late)\n`,
      free,
    ],
  ];
  for (const [name, path, text, expected] of cases) {
    it(name, () => assert.deepEqual(placementOf(path, text), expected));
  }

  it('refuses a declaration it cannot read, naming the file and the line', () => {
    for (const text of [
      '// test-file: alone\n',
      '// test-file: runs alone\n',
      '// test-file: lane Upper (x)\n',
    ]) {
      assert.throws(
        () => placementOf('f.test.ts', text),
        (error: Error) =>
          error instanceof TestFileDeclarationError &&
          error.message.startsWith('f.test.ts: ') &&
          error.message.includes(text.trim()),
      );
    }
  });
});

describe('nextToStart', () => {
  const cases: [string, Placement[], Placement[], number, number][] = [
    ['a free file starts in a free slot', [free], [], 4, 0],
    ['no slot left: nothing starts', [free], [free, free], 2, -1],
    ['a lane already running is passed over for the next file', [lane('x'), free], [lane('x')], 4, 1],
    ['another lane may start', [lane('y')], [lane('x')], 4, 0],
    ['a file running alone lets nothing start beside it', [free], [alone], 4, -1],
    ['a file that runs alone starts on an idle runner', [alone, free], [], 4, 0],
    ['a file that runs alone waits, and nothing overtakes it', [alone, free], [free], 4, -1],
    ['nothing left to start', [], [free], 4, -1],
  ];
  for (const [name, waiting, running, slots, expected] of cases) {
    it(name, () => assert.equal(nextToStart(waiting, running, slots), expected));
  }

  it('a lane as wide as two (two real-Nova harnesses) runs two of its files, not three', () => {
    const nova = lane('real-nova');
    const width = { 'real-nova': 2 };
    assert.equal(nextToStart([nova], [nova], 4, width), 0);
    assert.equal(nextToStart([nova, free], [nova, nova], 4, width), 1);
    assert.equal(nextToStart([nova], [nova, nova], 4, width), -1);
    assert.equal(nextToStart([nova], [], 4, { 'real-nova': 0 }), -1, 'a lane of width 0 waits');
  });
});

describe('offerOrder', () => {
  it('offers files that run alone first, then the longest (a lane by its whole time, its files by name), unknown files last', () => {
    const files = [
      { path: 'short.test.ts', ...free },
      { path: 'long.test.ts', ...free },
      { path: 'nova-1.real-nova.test.ts', ...lane('real-nova') },
      { path: 'nova-2.real-nova.test.ts', ...lane('real-nova') },
      { path: 'alone.test.ts', ...alone },
      { path: 'new.test.ts', ...free },
    ];
    const seconds = {
      'short.test.ts': 2,
      'long.test.ts': 100,
      'nova-1.real-nova.test.ts': 40,
      'nova-2.real-nova.test.ts': 80,
      'new-unknown': 1,
    };
    assert.deepEqual(
      offerOrder(files, seconds).map((file) => file.path),
      [
        'alone.test.ts',
        'nova-1.real-nova.test.ts',
        'nova-2.real-nova.test.ts',
        'long.test.ts',
        'new.test.ts',
        'short.test.ts',
      ],
    );
  });
});

describe('niceOf', () => {
  const cases: [string, Placement, number, number][] = [
    ['a real-Nova file beside others keeps the normal priority', lane('real-nova'), 4, 0],
    ['any other file beside others runs in the background', free, 4, BACKGROUND_NICE],
    ['a file of another lane too', lane('rabbitmq'), 4, BACKGROUND_NICE],
    ['a file that runs alone too (the harness still runs beside it)', alone, 4, BACKGROUND_NICE],
    ['one file at a time: nothing competes, every file at 0', free, 1, 0],
  ];
  for (const [name, placement, slots, expected] of cases) {
    it(name, () => assert.equal(niceOf(placement, slots), expected));
  }
  it('the background is a lower priority than the normal one', () => assert.ok(BACKGROUND_NICE > 0));
});
