/**
 * Runs tasks concurrently while keeping the order that matters for records: tasks with the same key
 * run one after another in arrival order, and a task without a key (a barrier) waits for every task
 * before it and holds back every task after it. Port commands are keyed by port id; commands on
 * networks, subnets, agents and bindings are barriers, so a port created after its subnet always sees
 * the subnet.
 */
export class OrderedExecutor {
  private barrier: Promise<void> = Promise.resolve();
  private readonly inFlight = new Set<Promise<void>>();
  private readonly tails = new Map<string, Promise<void>>();

  /** Schedules `task` after what it must follow; resolves or rejects with its result. */
  run<Result>(key: string | null, task: () => Promise<Result>): Promise<Result> {
    const before =
      key === null
        ? Promise.all([this.barrier, ...this.inFlight])
        : Promise.all([this.barrier, this.tails.get(key) ?? Promise.resolve()]);
    const result = before.then(task);
    const settled = result.then(
      () => undefined,
      () => undefined,
    );
    if (key === null) {
      this.barrier = settled;
    } else {
      this.tails.set(key, settled);
      this.inFlight.add(settled);
      void settled.then(() => {
        this.inFlight.delete(settled);
        if (this.tails.get(key) === settled) this.tails.delete(key);
      });
    }
    return result;
  }
}
