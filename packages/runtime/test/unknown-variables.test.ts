import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type OwnVariables, unknownVariables } from '../src/index.ts';

const FAMILY: OwnVariables = {
  prefixes: ['LIFEGUARD_WIDGET_', 'LIFEGUARD_GADGET_'],
  known: ['LIFEGUARD_WIDGET_PORT', 'LIFEGUARD_WIDGET_BIND', 'LIFEGUARD_GADGET_URI'],
};

describe('unknownVariables: the variables under a family’s prefixes that none of its programs reads', () => {
  const cases: Array<[variable: string, meant: string | null, why: string]> = [
    ['LIFEGUARD_WIDGET_PROT', 'LIFEGUARD_WIDGET_PORT', 'two letters swapped'],
    ['LIFEGUARD_GADGET_URL', 'LIFEGUARD_GADGET_URI', 'one letter changed, under the second prefix'],
    ['lifeguard_widget_bind', null, 'another letter case is another variable, and not under the prefix'],
    ['LIFEGUARD_WIDGET_BINDS', 'LIFEGUARD_WIDGET_BIND', 'one letter added'],
    ['LIFEGUARD_WIDGET_SOMETHING_ELSE', null, 'nothing known is close'],
  ];
  for (const [variable, meant, why] of cases) {
    it(`${variable} → ${meant ?? 'nothing close'} (${why})`, () => {
      const found = unknownVariables({ [variable]: '1' }, FAMILY);
      if (!variable.startsWith('LIFEGUARD_')) return assert.deepEqual(found, []);
      assert.deepEqual(
        found.map((each) => [each.variable, each.meant]),
        [[variable, meant]],
      );
    });
  }

  it('names the variable meant, which keeps its value, or else lists the family’s variables', () => {
    const [misspelled, unlike] = unknownVariables(
      { LIFEGUARD_WIDGET_PROT: '1', LIFEGUARD_WIDGET_ZZZZZZZZZZ: '2' },
      FAMILY,
    );
    assert.equal(
      misspelled?.problem,
      'not a variable lifeguard reads, and ignored: did you mean LIFEGUARD_WIDGET_PORT? LIFEGUARD_WIDGET_PORT keeps the value it has without it',
    );
    assert.equal(
      unlike?.problem,
      'not a variable lifeguard reads, and ignored; the LIFEGUARD_WIDGET_* and LIFEGUARD_GADGET_* variables are LIFEGUARD_GADGET_URI, LIFEGUARD_WIDGET_BIND, LIFEGUARD_WIDGET_PORT',
    );
  });

  it('leaves known variables, other prefixes and unset variables alone, and names the rest by name', () => {
    const found = unknownVariables(
      {
        LIFEGUARD_WIDGET_PORT: '1',
        LIFEGUARD_HTTP_PORT: '2',
        LIFEGUARD_WIDGETS_PORT: '3',
        OS_CLOUD: 'x',
        LIFEGUARD_WIDGET_UNSET: undefined,
        LIFEGUARD_WIDGET_ZZ: '',
        LIFEGUARD_GADGET_AA: '4',
      },
      FAMILY,
    );
    assert.deepEqual(
      found.map((each) => each.variable),
      ['LIFEGUARD_GADGET_AA', 'LIFEGUARD_WIDGET_ZZ'],
    );
  });
});
