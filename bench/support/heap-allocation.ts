// What one piece of work costs the JavaScript heap: the bytes it allocated and the garbage
// collections it caused. V8 does not count allocated bytes, so they are derived from its collector:
// v8.GCProfiler records the used heap before and after every collection while it runs, and
//   allocated = (used at the end − used at the start) + Σ (used before − used after each collection).
// Measured from a collected heap, that is every byte the work allocated on the JavaScript heap, kept
// or already collected. Memory outside the heap (undici's socket buffers) is not counted. The
// profiler's own records are a few hundred bytes per collection.
import { GCProfiler, getHeapStatistics } from 'node:v8';

export interface HeapCost {
  /** Bytes allocated on the JavaScript heap. */
  readonly allocatedBytes: number;
  /** Garbage collections during the work (young and old generation). */
  readonly collections: number;
  /** Milliseconds those collections took (V8's own figure, wall time on the main thread). */
  readonly collectionMilliseconds: number;
}

interface GcRecord {
  cost: number;
  beforeGC: { heapStatistics: { usedHeapSize: number } };
  afterGC: { heapStatistics: { usedHeapSize: number } };
}

/** Runs `work` under V8's GC profiler and returns what it allocated (start it from a collected heap). */
export async function heapCostOf(work: () => Promise<unknown>): Promise<HeapCost> {
  const profiler = new GCProfiler();
  const start = getHeapStatistics().used_heap_size;
  profiler.start();
  await work();
  const end = getHeapStatistics().used_heap_size;
  const records = (profiler.stop()?.statistics ?? []) as unknown as GcRecord[];
  let freed = 0;
  let cost = 0;
  for (const record of records) {
    freed += record.beforeGC.heapStatistics.usedHeapSize - record.afterGC.heapStatistics.usedHeapSize;
    cost += record.cost;
  }
  return {
    allocatedBytes: end - start + freed,
    collections: records.length,
    collectionMilliseconds: cost / 1000,
  };
}

/** The mean of several costs. */
export function meanHeapCost(costs: ReadonlyArray<HeapCost>): HeapCost {
  const mean = (pick: (cost: HeapCost) => number) =>
    costs.reduce((sum, cost) => sum + pick(cost), 0) / Math.max(1, costs.length);
  return {
    allocatedBytes: mean((cost) => cost.allocatedBytes),
    collections: mean((cost) => cost.collections),
    collectionMilliseconds: mean((cost) => cost.collectionMilliseconds),
  };
}

/** `8.4 MB, 5.0 collections (3.1 ms)` */
export function formatHeapCost(cost: HeapCost): string {
  return `${(cost.allocatedBytes / 1e6).toFixed(1)} MB, ${cost.collections.toFixed(1)} collections (${cost.collectionMilliseconds.toFixed(1)} ms)`;
}
