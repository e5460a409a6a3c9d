/**
 * JSON values written as Python writes them (`repr` and `str`), because Masakari's validation
 * messages embed the offending value that way: `Value: {'name': 'x'}. 1 is not of type 'string'`.
 */

/** A Python tuple, for the enums Masakari defines as tuples (`('COMPUTE_HOST', 'VM', 'PROCESS')`). */
export class PythonTuple {
  constructor(readonly items: ReadonlyArray<unknown>) {}
}

function escapeCharacter(character: string, quote: string): string {
  if (character === '\\') return '\\\\';
  if (character === quote) return `\\${quote}`;
  if (character === '\n') return '\\n';
  if (character === '\r') return '\\r';
  if (character === '\t') return '\\t';
  const code = character.codePointAt(0)!;
  // Python escapes what it does not print: control and format characters, line and paragraph separators
  if (
    /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}]/u.test(character) ||
    (code >= 0x80 && code <= 0xa0) ||
    code === 0xad
  ) {
    if (code <= 0xff) return `\\x${code.toString(16).padStart(2, '0')}`;
    if (code <= 0xffff) return `\\u${code.toString(16).padStart(4, '0')}`;
    return `\\U${code.toString(16).padStart(8, '0')}`;
  }
  if (/\p{Zs}/u.test(character) && character !== ' ') return `\\x${code.toString(16).padStart(2, '0')}`;
  return character;
}

/** Python's `repr` of a string: single quotes unless it holds a single quote and no double one. */
export function pythonStringRepr(text: string): string {
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  let body = '';
  for (const character of text) body += escapeCharacter(character, quote);
  return `${quote}${body}${quote}`;
}

function numberRepr(value: number): string {
  if (Number.isInteger(value) && Math.abs(value) < 1e16) return String(value);
  if (Number.isNaN(value)) return 'nan';
  if (!Number.isFinite(value)) return value > 0 ? 'inf' : '-inf';
  const text = String(value);
  return text.includes('e')
    ? text.replace(/e([+-])(\d)$/, (_, sign: string, digit: string) => `e${sign}0${digit}`)
    : text;
}

/** Python's `repr` of a JSON value (dicts keep their key order, as Python's do). */
export function pythonRepr(value: unknown): string {
  if (value === null || value === undefined) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (typeof value === 'number') return numberRepr(value);
  if (typeof value === 'string') return pythonStringRepr(value);
  if (value instanceof PythonTuple) {
    const items = value.items.map(pythonRepr);
    return items.length === 1 ? `(${items[0]},)` : `(${items.join(', ')})`;
  }
  if (Array.isArray(value)) return `[${value.map(pythonRepr).join(', ')}]`;
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    return `{${entries.map(([key, item]) => `${pythonStringRepr(key)}: ${pythonRepr(item)}`).join(', ')}}`;
  }
  return String(value);
}

/** Python's `str` of a JSON value: a string as it is, anything else as its repr. */
export function pythonStr(value: unknown): string {
  return typeof value === 'string' ? value : pythonRepr(value);
}
