/**
 * The keys that appear more than once in one object of a JSON text, as `path.key` (`queue`,
 * `err.code`), in the order found. JSON.parse keeps the last of repeated keys without a word, and
 * strict log parsers reject such a line, so log tests check it with this.
 */
export function repeatedJsonKeys(text: string): string[] {
  const repeated: string[] = [];
  // One entry per open container: its keys so far (null for an array) and its path.
  const open: Array<{ keys: Set<string> | null; path: string; lastKey: string | null }> = [];
  let index = 0;
  while (index < text.length) {
    const character = text[index]!;
    if (character === '"') {
      let end = index + 1;
      while (end < text.length && text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      const value = JSON.parse(text.slice(index, end + 1)) as string;
      index = end + 1;
      while (index < text.length && /\s/.test(text[index]!)) index++;
      const container = open.at(-1);
      if (text[index] === ':' && container?.keys) {
        const name = container.path ? `${container.path}.${value}` : value;
        if (container.keys.has(value)) repeated.push(name);
        container.keys.add(value);
        container.lastKey = value;
      }
      continue;
    }
    if (character === '{' || character === '[') {
      const parent = open.at(-1);
      const path = parent ? [parent.path, parent.keys ? parent.lastKey : null].filter(Boolean).join('.') : '';
      open.push({ keys: character === '{' ? new Set() : null, path, lastKey: null });
    } else if (character === '}' || character === ']') {
      open.pop();
    }
    index++;
  }
  return repeated;
}
