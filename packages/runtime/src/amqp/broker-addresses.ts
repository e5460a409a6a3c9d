import type { Options } from 'amqplib';
import { z } from 'zod';

/** Why an AMQP URL list could not be read; the message names the part at fault. */
export class AmqpUrlListError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AmqpUrlListError';
  }
}

const SCHEMES: Readonly<Record<string, 'amqp' | 'amqps'>> = { amqp: 'amqp', amqps: 'amqps', rabbit: 'amqp' };

function oneUrl(text: string, position: number): string {
  let parsed: URL;
  try {
    parsed = new URL(text);
  } catch {
    throw new AmqpUrlListError(`address ${position} is not a URL`);
  }
  const scheme = SCHEMES[parsed.protocol.replace(/:$/, '')];
  if (!scheme)
    throw new AmqpUrlListError(`address ${position} must be an amqp://, amqps:// or rabbit:// URL`);
  if (!parsed.hostname) throw new AmqpUrlListError(`address ${position} names no host`);
  return `${scheme}://${text.slice(text.indexOf('://') + 3)}`;
}

/**
 * Reads LIFEGUARD_AMQP_URL into the brokers' addresses, tried in this order (docs/operations.md#511-rabbitmq-cluster):
 * - one URL: `amqp://user:password@host:5672/vhost` (or `amqps://`);
 * - a comma-separated list of such URLs, one per RabbitMQ node;
 * - oslo.messaging's transport_url with several hosts,
 *   `rabbit://user:password@host1:5672,user:password@host2:5672/vhost?query`: the scheme of the first,
 *   the vhost and query of the last apply to every host (`rabbit` reads as `amqp`).
 * Each address comes back as a full `amqp(s)://` URL. Passwords must be percent-encoded (a `,` in
 * one would split the list).
 * @throws AmqpUrlListError naming the position (from 1) of the address at fault
 */
export function parseAmqpUrlList(value: string): string[] {
  const parts = value
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '');
  if (parts.length === 0) throw new AmqpUrlListError('no address given');
  const hostOnly = parts.slice(1).filter((part) => !part.includes('://'));
  if (hostOnly.length === 0) return parts.map((part, index) => oneUrl(part, index + 1));
  if (hostOnly.length !== parts.length - 1) {
    throw new AmqpUrlListError('mixes full URLs and oslo transport_url hosts; use one form');
  }
  // oslo's form: `scheme://host1,host2/vhost`: the path and query follow the last host.
  const first = parts[0]!;
  const scheme = first.slice(0, first.indexOf('://'));
  const last = parts[parts.length - 1]!;
  const tailStart = last.search(/[/?]/);
  const tail = tailStart === -1 ? '/' : last.slice(tailStart);
  const hosts = [first.slice(scheme.length + 3), ...parts.slice(1)].map((host, index, all) =>
    index === all.length - 1 && tailStart !== -1
      ? host.slice(0, host.search(/[/?]/))
      : host.replace(/\/$/, ''),
  );
  return hosts.map((host, index) => oneUrl(`${scheme}://${host}${tail}`, index + 1));
}

/**
 * The brokers' addresses as amqplib's connection options, one at a time: amqplib's recovery reads
 * `hostname`, `port`, credentials and `vhost` from this object at each connection attempt, and
 * `advance()` (called after a failed attempt and after a lost connection) moves to the next address,
 * round-robin as kombu's default failover strategy does for oslo.messaging (docs/operations.md#511-rabbitmq-cluster).
 */
export class BrokerAddresses {
  private index = 0;

  /**
   * @param urls full `amqp(s)://` URLs (parseAmqpUrlList)
   * @param heartbeatSeconds AMQP heartbeat asked of the broker; default the URL's `heartbeat` query
   *   parameter, else the server's
   */
  constructor(
    readonly urls: ReadonlyArray<string>,
    private readonly heartbeatSeconds?: number,
  ) {
    if (urls.length === 0) throw new AmqpUrlListError('no address given');
  }

  /** The address the next connection attempt uses. */
  get current(): string {
    return this.urls[this.index]!;
  }

  /** Moves to the next address (round-robin); returns it. */
  advance(): string {
    this.index = (this.index + 1) % this.urls.length;
    return this.current;
  }

  /** amqplib connection options whose fields always describe the current address. */
  connectOptions(): Options.Connect {
    const addresses = this;
    const parsed = () => new URL(addresses.current);
    const query = (name: string) => {
      const value = parsed().searchParams.get(name);
      return value === null ? undefined : Number(value);
    };
    return {
      get protocol() {
        return parsed().protocol.replace(/:$/, '');
      },
      get hostname() {
        return parsed().hostname.replace(/^\[|\]$/g, '');
      },
      get port() {
        const port = parsed().port;
        return port === '' ? undefined : Number(port);
      },
      get username() {
        const url = parsed();
        return url.username === '' && url.password === '' ? undefined : decodeURIComponent(url.username);
      },
      get password() {
        const url = parsed();
        return url.username === '' && url.password === '' ? undefined : decodeURIComponent(url.password);
      },
      get vhost() {
        // amqplib unescapes it.
        return parsed().pathname.slice(1) || '/';
      },
      get heartbeat() {
        return addresses.heartbeatSeconds ?? query('heartbeat');
      },
      get frameMax() {
        return query('frameMax');
      },
      get channelMax() {
        return query('channelMax');
      },
    } as Options.Connect;
  }
}

/**
 * A setting that holds RabbitMQ's address: one amqp:// or amqps:// URL, a comma-separated list of
 * them, or oslo's `rabbit://user:pass@h1:5672,user:pass@h2:5672/vhost` (parseAmqpUrlList); an
 * invalid one fails parsing with the reason, so the loader's ConfigError names the setting.
 */
export const amqpUrlListSetting = z.string().superRefine((value, context) => {
  try {
    parseAmqpUrlList(value);
  } catch (error) {
    context.addIssue({
      code: 'custom',
      message: `must be an amqp:// or amqps:// URL, a comma-separated list of them, or oslo's rabbit:// transport_url (${(error as Error).message})`,
    });
  }
});
