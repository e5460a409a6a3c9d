import { randomUUID } from 'node:crypto';
import {
  ContractViolationError,
  type OsloFailure,
  type OsloReplyAddress,
  type OsloRequest,
  parseWith,
  unsupportedEnvelopeFailure,
} from '@lifeguard/contracts';
import type { RedisClient } from '@lifeguard/runtime';
import { RejectedMessageError } from '@lifeguard/runtime';
import type { Logger } from 'pino';
import { RpcMethodError } from '../errors.ts';
import type { ProvisioningMetrics } from '../metrics.ts';
import type { HandledMarker } from '../store/block-store.ts';
import type { ProvisioningKeys } from '../store/provisioning-keys.ts';
import {
  ALREADY_HANDLED,
  methodFailure,
  type RpcEndpoint,
  type RpcMethod,
  selectMethod,
} from './oslo-dispatcher.ts';
import type { OsloReplySender } from './oslo-reply-sender.ts';
import { readOsloRequest } from './oslo-request.ts';

export interface OsloRequestHandlerOptions {
  redis: RedisClient;
  keys: ProvisioningKeys;
  replies: OsloReplySender;
  /** How long a handled `_unique_id` is remembered (with its reply), in seconds. */
  handledTtlSeconds: number;
  logger: Logger;
  metrics?: ProvisioningMetrics | null;
}

/** A body the envelope decoder refused that still names a reply queue: the caller is told why. */
export class UndecodableCall {
  constructor(
    /** The decoder's reason, which the dead letter carries. */
    readonly reason: string,
    readonly address: OsloReplyAddress,
  ) {}
}

/** Where a call's reply goes; null for a cast. */
type ReplyTo = { replyQueue: string; msgId: string } | null;

/** What a method run gave: its result, or the failure to answer with. */
type MethodOutcome = { result: unknown; failure: null } | { result: null; failure: OsloFailure };

const hex32 = () => randomUUID().replaceAll('-', '');

/** The metrics label of a method: its name when some endpoint serves it, else `(unknown)`. */
function methodLabel(endpoints: ReadonlyArray<RpcEndpoint>, method: string): string {
  return endpoints.some((endpoint) => endpoint.methods.has(method)) ? method : '(unknown)';
}

/**
 * Handles one decoded oslo request: validation, dispatch (oslo's rules), duplicate suppression and
 * the reply. Order of a call: effect (and its handled marker) in Redis, then the reply record in
 * Redis, then the reply published and confirmed by RabbitMQ; only then does the consumer acknowledge
 * the request. A request redelivered after a crash anywhere in between carries the same `_unique_id`
 * and `_msg_id`, finds the handled markers, does nothing again and answers the caller's original call
 * with the first result. Every failure answered to a caller is counted
 * (`rpc_requests_total{outcome="failure"}`) and logged at warn with the method and the reason.
 */
export class OsloRequestHandler {
  constructor(private readonly options: OsloRequestHandlerOptions) {}

  /**
   * Answers a call whose envelope could not be decoded with oslo's UnsupportedRpcEnvelopeVersion,
   * confirmed, then rejects it so that it is dead-lettered with the decoder's reason.
   * @throws RejectedMessageError always (after the reply)
   */
  async answerUndecodable(topic: string, call: UndecodableCall): Promise<never> {
    const { address } = call;
    await this.replyFailure(
      topic,
      '(undecodable)',
      { replyQueue: address.replyQueue, msgId: address.msgId },
      unsupportedEnvelopeFailure(address.envelopeVersion),
      call.reason,
    );
    throw new RejectedMessageError(call.reason);
  }

  /**
   * Handles a decoded request.
   * @throws RejectedMessageError or ContractViolationError for a bad cast (dead-lettered); any other
   *   error when Redis or the reply failed (the request is requeued and handled again)
   */
  async handle(
    topic: string,
    endpoints: ReadonlyArray<RpcEndpoint>,
    inner: Record<string, unknown>,
  ): Promise<void> {
    const { metrics } = this.options;
    const replyQueue = typeof inner._reply_q === 'string' ? inner._reply_q : null;
    const msgId = typeof inner._msg_id === 'string' ? inner._msg_id : null;
    const replyTo: ReplyTo = replyQueue !== null && msgId !== null ? { replyQueue, msgId } : null;
    const method = methodLabel(endpoints, typeof inner.method === 'string' ? inner.method : '');

    const parsed = readOsloRequest(inner);
    if (!parsed.success) {
      const problem = new ContractViolationError(
        'oslo request',
        parsed.error.issues.map((issue) => ({ path: issue.path.map(String), message: issue.message })),
      );
      if (replyTo === null) {
        metrics?.rpcRequests.inc({ method, outcome: 'rejected' });
        throw problem;
      }
      const failure = methodFailure('ValueError', 'builtins', problem.message);
      await this.replyFailure(topic, method, replyTo, failure, problem.message);
      return;
    }
    const request = parsed.data;
    const selected = selectMethod(endpoints, request.method, request.version, request.namespace ?? null);
    if ('failure' in selected) {
      const reason = `${selected.failure.class}: ${selected.failure.message}`;
      if (replyTo === null) {
        metrics?.rpcRequests.inc({ method, outcome: 'rejected' });
        throw new RejectedMessageError(reason);
      }
      await this.replyFailure(topic, method, replyTo, selected.failure, reason);
      return;
    }
    await this.run(topic, selected.method, request, replyTo, inner);
  }

  private async run(
    topic: string,
    method: RpcMethod,
    request: OsloRequest,
    replyTo: ReplyTo,
    inner: Record<string, unknown>,
  ): Promise<void> {
    const { redis, keys, metrics, handledTtlSeconds } = this.options;
    const started = process.hrtime.bigint();
    const handledKey = request._unique_id ? keys.handledRequest(request._unique_id) : null;
    const atomic = method.recordsHandled === true;
    if (handledKey && !atomic) {
      const remembered = await redis.get(handledKey);
      if (remembered !== null) {
        this.countDuplicate(topic, request);
        const record = JSON.parse(remembered) as { result?: unknown; failure?: string | null };
        if (replyTo) await this.reply(replyTo, record.result ?? null, record.failure ?? null);
        return;
      }
    }
    const marker = (key: string | null): HandledMarker | null =>
      key ? { key, ttlSeconds: handledTtlSeconds, value: replyTo ? '{"result":null}' : '{}' } : null;
    const context = {
      requestId: typeof inner._context_request_id === 'string' ? inner._context_request_id : null,
      handled: atomic ? marker(handledKey) : null,
      handledPart: (part: string) => marker(handledKey ? `${handledKey}:${part}` : null),
    };
    const ran = await this.runMethod(method, request, replyTo, context);
    if (ran === ALREADY_HANDLED) {
      this.countDuplicate(topic, request);
      if (replyTo) await this.reply(replyTo, null, null);
      return;
    }
    if (ran.failure) {
      const reason = `${ran.failure.class}: ${ran.failure.message}`;
      if (replyTo === null) {
        metrics?.rpcRequests.inc({ method: request.method, outcome: 'rejected' });
        throw new RejectedMessageError(reason);
      }
      await this.replyFailure(topic, request.method, replyTo, ran.failure, reason);
      return;
    }
    if (handledKey && !atomic) {
      await redis.set(
        handledKey,
        JSON.stringify(replyTo ? { result: ran.result } : {}),
        'EX',
        handledTtlSeconds,
      );
    }
    metrics?.rpcRequests.inc({ method: request.method, outcome: 'ok' });
    metrics?.rpcDurationSeconds.observe(
      { method: request.method },
      Number(process.hrtime.bigint() - started) / 1e9,
    );
    if (replyTo) await this.reply(replyTo, ran.result, null);
  }

  /** Runs the method with call-monitor heartbeats (when asked), mapping its typed errors to failures. */
  private async runMethod(
    method: RpcMethod,
    request: OsloRequest,
    replyTo: ReplyTo,
    context: Parameters<RpcMethod['handler']>[1],
  ): Promise<MethodOutcome | typeof ALREADY_HANDLED> {
    const timeout = request._timeout;
    const heartbeat =
      replyTo && typeof timeout === 'number' && Number.isInteger(timeout) && timeout >= 2
        ? setInterval(
            () =>
              this.options.replies.send(replyTo.replyQueue, {
                result: null,
                failure: null,
                ending: false,
                _msg_id: replyTo.msgId,
                _unique_id: hex32(),
              }),
            (timeout * 1000) / 2,
          )
        : null;
    try {
      const args = parseWith(method.args, request.args, `${request.method} arguments`);
      const result = await method.handler(args as never, context);
      return result === ALREADY_HANDLED ? ALREADY_HANDLED : { result: result ?? null, failure: null };
    } catch (error) {
      if (error instanceof ContractViolationError) {
        return { result: null, failure: methodFailure('TypeError', 'builtins', error.message) };
      }
      if (error instanceof RpcMethodError) {
        return {
          result: null,
          failure: methodFailure(error.exceptionClass, error.exceptionModule, error.message),
        };
      }
      this.options.metrics?.rpcRequests.inc({ method: request.method, outcome: 'error' });
      throw error;
    } finally {
      if (heartbeat) clearInterval(heartbeat);
    }
  }

  private countDuplicate(topic: string, request: OsloRequest): void {
    const { metrics, logger } = this.options;
    metrics?.duplicatesSuppressed.inc({ source: 'rpc' });
    metrics?.rpcRequests.inc({ method: request.method, outcome: 'duplicate' });
    logger.info(
      { method: request.method, uniqueId: request._unique_id, topic },
      'ignoring duplicate message',
    );
  }

  /** Counts and logs (warn, with method and reason) a failed call, then answers it (confirmed). */
  private async replyFailure(
    topic: string,
    method: string,
    replyTo: NonNullable<ReplyTo>,
    failure: OsloFailure,
    reason: string,
  ): Promise<void> {
    this.options.metrics?.rpcRequests.inc({ method, outcome: 'failure' });
    this.options.logger.warn(
      { method, reason, topic, exception: failure.class, msgId: replyTo.msgId },
      'RPC call failed; the caller gets the failure',
    );
    await this.reply(replyTo, null, JSON.stringify(failure));
  }

  /** Sends the one final reply of a call and waits for RabbitMQ's confirm. */
  private reply(replyTo: NonNullable<ReplyTo>, result: unknown, failure: string | null): Promise<void> {
    return this.options.replies.sendConfirmed(replyTo.replyQueue, {
      result,
      failure,
      ending: true,
      _msg_id: replyTo.msgId,
      _unique_id: hex32(),
    });
  }
}
