import type { FastifyInstance, FastifyRequest } from 'fastify';

/** One request the simulated cloud received, on its API listener or at a BMC. */
export interface RecordedRequest {
  /** `api` (Nova, Glance, Keystone) or `redfish` (a BMC). */
  readonly listener: 'api' | 'redfish';
  readonly method: string;
  /** The path with its query string, e.g. `/compute/v2.1/os-services/<id>`. */
  readonly url: string;
  /** The parsed JSON body, or undefined. */
  readonly body: unknown;
  /** When it arrived (epoch milliseconds). */
  readonly receivedAt: number;
  /** The status code of the answer; null while it is not answered yet. */
  status: number | null;
}

/**
 * When an observer runs: `before-effect` once the request is parsed and before the simulated cloud
 * acts on it; `after-effect` once it acted (the effect is in the model) and before the answer is sent.
 */
export type RequestPhase = 'before-effect' | 'after-effect';

/**
 * An observer of requests. Its promise holds the request at that point until it settles (a test can
 * kill the caller and wait for it to be gone, so the caller never sees the answer). Returning `drop`
 * in the `before-effect` phase closes the connection without acting on the request: as if the
 * caller died before its request arrived.
 */
export type RequestObserver = (
  request: RecordedRequest,
  phase: RequestPhase,
) => undefined | 'drop' | Promise<undefined | 'drop'>;

/**
 * Every request the simulated cloud received, oldest first, with its answer's status, and the
 * observers tests use to find (and hold) the moment a step of lifeguard's reaches the cloud: a BMC's
 * `ComputerSystem.Reset`, a compute service update, an evacuate action.
 */
export class RequestRecord {
  readonly requests: RecordedRequest[] = [];
  private readonly observers = new Set<RequestObserver>();

  /** Adds an observer; returns the function that removes it. */
  observe(observer: RequestObserver): () => void {
    this.observers.add(observer);
    return () => this.observers.delete(observer);
  }

  /** The requests matching `predicate`, oldest first. */
  matching(predicate: (request: RecordedRequest) => boolean): RecordedRequest[] {
    return this.requests.filter(predicate);
  }

  /** Records a request and runs the `before-effect` observers; true when one of them dropped it. */
  async received(request: RecordedRequest): Promise<boolean> {
    this.requests.push(request);
    let dropped = false;
    for (const observer of [...this.observers]) {
      if ((await observer(request, 'before-effect')) === 'drop') dropped = true;
    }
    return dropped;
  }

  /** Records the answer's status and runs the `after-effect` observers. */
  async answered(request: RecordedRequest, status: number): Promise<void> {
    request.status = status;
    for (const observer of [...this.observers]) await observer(request, 'after-effect');
  }

  /** Forgets every request and observer. */
  clear(): void {
    this.requests.length = 0;
    this.observers.clear();
  }
}

const recorded = new WeakMap<FastifyRequest, RecordedRequest>();

/**
 * Records every request of a listener in `record` (the control API under `/_sim` excepted) and runs
 * its observers: `before-effect` in the pre-handler hook (the body is parsed; a dropped request has
 * its connection closed and is never handled), `after-effect` in the on-send hook (the handler has
 * acted; the answer is not sent yet). Call it before the routes are registered.
 */
export function recordRequests(
  app: FastifyInstance,
  record: RequestRecord,
  listener: RecordedRequest['listener'],
): void {
  app.addHook('preHandler', async (request, reply) => {
    if (request.url.startsWith('/_sim')) return undefined;
    const entry: RecordedRequest = {
      listener,
      method: request.method,
      url: request.url,
      body: request.body,
      receivedAt: Date.now(),
      status: null,
    };
    recorded.set(request, entry);
    if (await record.received(entry)) {
      reply.hijack();
      request.raw.socket.destroy();
      return reply;
    }
    return undefined;
  });
  app.addHook('onSend', async (request, reply, payload) => {
    const entry = recorded.get(request);
    if (entry) await record.answered(entry, reply.statusCode);
    return payload;
  });
}
