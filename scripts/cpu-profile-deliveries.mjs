// Summarises a V8 CPU profile (`node --cpu-prof`, or BENCH_PROFILE_DIRECTORY of the benchmarks):
// the busy time of the window in which the process handled AMQP deliveries, by category and by
// lifeguard file, with shares. Usage:
//   node scripts/cpu-profile-deliveries.mjs <file.cpuprofile> [completions] [window function]
// `completions` divides the busy time; the window is the span of samples whose stack holds the
// window function (default handleDelivery, amqplib's delivery of a message to a consumer).
import { readFileSync } from 'node:fs';

const [file, completionsText, windowFunction = 'handleDelivery'] = process.argv.slice(2);
if (!file) {
  process.stderr.write(
    'usage: node scripts/cpu-profile-deliveries.mjs <file.cpuprofile> [completions] [window function]\n',
  );
  process.exit(64);
}
const profile = JSON.parse(readFileSync(file, 'utf8'));
const completions = Number(completionsText ?? 0);
const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
const parents = new Map();
for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id);
const stackOf = (id) => {
  const frames = [];
  for (let current = id; current !== undefined; current = parents.get(current))
    frames.push(nodes.get(current).callFrame);
  return frames;
};

const times = [];
let clock = profile.startTime;
for (const delta of profile.timeDeltas) {
  clock += delta;
  times.push(clock);
}
let first = Number.POSITIVE_INFINITY;
let last = Number.NEGATIVE_INFINITY;
profile.samples.forEach((id, index) => {
  if (!stackOf(id).some((frame) => frame.functionName === windowFunction)) return;
  first = Math.min(first, times[index]);
  last = Math.max(last, times[index]);
});

const SYSTEM_CALLS = new Set([
  'writeBuffer',
  'writev',
  'writeUtf8String',
  'writeLatin1String',
  'handleWriteReq',
  'writeGeneric',
  'writevGeneric',
]);
const LIBRARIES = [
  [
    /node_modules\/(ioredis|redis-parser|standard-as-callback|cluster-key-slot|denque)\//,
    'Redis client (ioredis)',
  ],
  [/node_modules\/amqplib\//, 'AMQP client (amqplib)'],
  [/node_modules\/prom-client\//, 'metrics (prom-client)'],
];
/** The category of one sample, from its stack (leaf first). */
function categoryOf(frames) {
  const [leaf] = frames;
  if (leaf.functionName === '(garbage collector)') return 'garbage collection';
  if (SYSTEM_CALLS.has(leaf.functionName)) return 'socket writes (system calls)';
  if (frames.some((frame) => frame.functionName === 'transitionEventId'))
    return 'name-based event ids (SHA-1)';
  if (frames.some((frame) => frame.functionName === 'parseWith') || leaf.url.includes('node_modules/zod/'))
    return 'zod validation';
  for (const [pattern, name] of LIBRARIES) if (pattern.test(leaf.url)) return name;
  if (leaf.url.includes('/packages/'))
    return `lifeguard: ${leaf.url.replace(/^.*\/packages\//, '').replace('/src/', '/')}`;
  if (frames.some((frame) => frame.url.includes('/packages/')))
    return 'Node built-ins called by lifeguard code';
  return 'Node internals (streams, timers, promises)';
}

const byCategory = new Map();
let busy = 0;
let idle = 0;
profile.samples.forEach((id, index) => {
  if (times[index] < first || times[index] > last) return;
  const delta = profile.timeDeltas[index] ?? 0;
  const frames = stackOf(id);
  if (frames[0].functionName === '(idle)') {
    idle += delta;
    return;
  }
  busy += delta;
  const category = categoryOf(frames);
  byCategory.set(category, (byCategory.get(category) ?? 0) + delta);
});

const milliseconds = (microseconds) => (microseconds / 1000).toFixed(0).padStart(6);
const share = (microseconds) => `${((100 * microseconds) / busy).toFixed(1).padStart(5)}%`;
const perCompletion =
  completions > 0 ? `; busy per completion ${(busy / 1000 / completions).toFixed(3)} ms` : '';
process.stdout.write(
  `window ${((last - first) / 1e6).toFixed(2)} s (around ${windowFunction}); busy ${milliseconds(busy).trim()} ms, idle ${milliseconds(idle).trim()} ms${perCompletion}\n`,
);
const ours = [...byCategory].filter(([name]) => name.startsWith('lifeguard: ')).sort((a, b) => b[1] - a[1]);
const rows = [...byCategory].filter(([name]) => !name.startsWith('lifeguard: '));
rows.push(['lifeguard code (all files)', ours.reduce((sum, [, value]) => sum + value, 0)]);
for (const [name, value] of rows.sort((a, b) => b[1] - a[1]))
  process.stdout.write(`  ${share(value)} ${milliseconds(value)} ms  ${name}\n`);
process.stdout.write('  lifeguard code by file:\n');
for (const [name, value] of ours.slice(0, 10))
  process.stdout.write(
    `    ${share(value)} ${milliseconds(value)} ms  ${name.slice('lifeguard: '.length)}\n`,
  );
