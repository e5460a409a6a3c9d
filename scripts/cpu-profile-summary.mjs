// Sums a V8 CPU profile (`node --cpu-prof` writes one *.cpuprofile per process) by function: the share
// of the profile's busy samples (idle left out) each function took itself (self) and with what it
// called (total), with garbage collection and the program's native work as their own rows.
//
// Usage: node scripts/cpu-profile-summary.mjs <file.cpuprofile> [--rows 25] [--total] [--windows file.json]
//   --total sorts by total instead of self share;
//   --windows keeps only the samples taken in the windows the file lists, `[[from, to], ...]` in the
//   profile's clock (microseconds of the monotonic clock, `process.hrtime.bigint() / 1000n`): the
//   work a benchmark wrote down as it ran it (bench/detection writes one window per poll cycle).
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    rows: { type: 'string', default: '25' },
    total: { type: 'boolean', default: false },
    windows: { type: 'string' },
  },
});
const [file] = positionals;
if (!file || positionals.length > 1) {
  console.error(
    'usage: node scripts/cpu-profile-summary.mjs <file.cpuprofile> [--rows n] [--total] [--windows file.json]',
  );
  process.exit(2);
}
const rows = Number(values.rows);
const byTotal = values.total;
const profile = JSON.parse(readFileSync(file, 'utf8'));
/** @type {Array<[number, number]>} sorted, not overlapping */
const windows = values.windows
  ? JSON.parse(readFileSync(values.windows, 'utf8')).map(([from, to]) => [Number(from), Number(to)])
  : [[profile.startTime, profile.endTime]];
windows.sort((a, b) => a[0] - b[0]);

const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
const parents = new Map();
for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id);

/** `name (file:line)`, one key per function wherever it is called from. */
function keyOf(node) {
  const { functionName, url, lineNumber } = node.callFrame;
  const name = functionName || '(anonymous)';
  if (!url) return name;
  const where = url.includes('/node_modules/')
    ? url.slice(url.lastIndexOf('/node_modules/') + '/node_modules/'.length)
    : basename(url);
  return `${name} (${where}:${lineNumber + 1})`;
}

// sample i was taken at startTime + timeDeltas[0] + ... + timeDeltas[i]
const counts = new Map();
let at = profile.startTime;
let kept = 0;
let window = 0;
profile.samples.forEach((id, index) => {
  at += profile.timeDeltas[index];
  while (window < windows.length && at > windows[window][1]) window++;
  if (window === windows.length || at < windows[window][0]) return;
  kept++;
  counts.set(id, (counts.get(id) ?? 0) + 1);
});
const self = new Map();
const total = new Map();
let busy = 0;
for (const [id, count] of counts) {
  const node = nodes.get(id);
  if (node.callFrame.functionName === '(idle)') continue;
  busy += count;
  const key = keyOf(node);
  self.set(key, (self.get(key) ?? 0) + count);
  // each function on the stack once, however deep its recursion
  const seen = new Set();
  for (let at = id; at !== undefined; at = parents.get(at)) {
    const each = keyOf(nodes.get(at));
    if (seen.has(each)) continue;
    seen.add(each);
    total.set(each, (total.get(each) ?? 0) + count);
  }
}
const span = windows.reduce((sum, [from, to]) => sum + to - from, 0) / 1000;
console.log(
  `${basename(file)}: ${busy} busy samples of ${kept} in ${windows.length} window(s), ${span.toFixed(0)} ms (one sample per ${(span / Math.max(1, kept)).toFixed(2)} ms)`,
);
console.log(' self %  total %  function');
const order = [...(byTotal ? total : self)].sort((a, b) => b[1] - a[1]).slice(0, rows);
for (const [key] of order) {
  const share = (map) => ((100 * (map.get(key) ?? 0)) / busy).toFixed(1).padStart(6);
  console.log(`${share(self)}  ${share(total)}  ${key}`);
}
