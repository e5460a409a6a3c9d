/** A scripted answer that replaces the next matching API responses (bad-input tests). */
export interface InjectedResponse {
  status: number;
  body: string;
  contentType: string;
  /** Only requests whose path starts with this (e.g. `/compute/v2.1/os-services`); all when absent. */
  pathPrefix?: string;
  /** How many responses to replace (default 1). */
  count: number;
}

/**
 * API-level faults of the simulated cloud: every response delayed (slow API), and scripted
 * answers (e.g. a 500 with an HTML page) for the next requests.
 */
export class FaultInjector {
  /** Delay added to every Nova/Glance/Keystone response, in milliseconds. */
  apiDelayMilliseconds = 0;
  /** Only requests under this path prefix are delayed; all when null. */
  apiDelayPathPrefix: string | null = null;
  private readonly scripted: InjectedResponse[] = [];

  inject(response: Omit<InjectedResponse, 'count'> & { count?: number }): void {
    this.scripted.push({ ...response, count: response.count ?? 1 });
  }

  /** The scripted answer for this path, if any (consumes one use). */
  take(path: string): InjectedResponse | null {
    const index = this.scripted.findIndex((each) => !each.pathPrefix || path.startsWith(each.pathPrefix));
    if (index < 0) return null;
    const found = this.scripted[index]!;
    found.count--;
    if (found.count <= 0) this.scripted.splice(index, 1);
    return found;
  }

  delayFor(path: string): number {
    if (this.apiDelayMilliseconds <= 0) return 0;
    if (this.apiDelayPathPrefix && !path.startsWith(this.apiDelayPathPrefix)) return 0;
    return this.apiDelayMilliseconds;
  }

  clear(): void {
    this.apiDelayMilliseconds = 0;
    this.apiDelayPathPrefix = null;
    this.scripted.length = 0;
  }
}
