import { brokerStartHint } from '../broker-start-hints.ts';
import { redactUrl } from '../config/secret-keys.ts';
import { BrokerRefusedError, BrokerUnreachableError } from '../errors.ts';
import { readOpenRefusal } from './open-refusal-probe.ts';

const URL_KEY = 'LIFEGUARD_AMQP_URL';

/** How to start RabbitMQ, for a connection that could not be made at all (brokerStartHint). */
export const RABBITMQ_START_HINT = brokerStartHint('RabbitMQ');

/** A word as a POSIX shell reads it back (quoted when it holds anything but safe characters). */
function shellWord(word: string): string {
  return /^[A-Za-z0-9_./:@%+=-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** The user and vhost amqplib logs in with for `url` (guest and `/` when the URL has none). */
function loginOf(url: string): { user: string; vhost: string; host: string } {
  try {
    const parsed = new URL(url);
    const credentials = parsed.username !== '' || parsed.password !== '';
    return {
      user: credentials ? decodeURIComponent(parsed.username) : 'guest',
      vhost: decodeURIComponent(parsed.pathname.slice(1)) || '/',
      host: parsed.hostname.replace(/^\[|\]$/g, ''),
    };
  } catch {
    return { user: 'guest', vhost: '/', host: '' };
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message || error.name : String(error);
}

/** amqplib: `Handshake terminated by server: 403 (ACCESS-REFUSED) with message "ACCESS_REFUSED - ..."`. */
const ACCESS_REFUSED = /Handshake terminated by server: 403 \(ACCESS-REFUSED\) with message "(.*)"$/s;
/** amqplib's whole report of a connection.close in answer to connection.open (the reason is lost). */
const CLOSED_AT_OPEN = /^Expected ConnectionOpenOk; got <ConnectionClose/;

/**
 * Tells apart why an AMQP connection could not be opened, for the message an operator reads:
 * - RabbitMQ refused the login (ACCESS_REFUSED): BrokerRefusedError saying the credentials in
 *   LIFEGUARD_AMQP_URL were refused, with RabbitMQ's answer;
 * - RabbitMQ closed the connection at `connection.open` (the vhost): asks the broker again for its
 *   reply (amqplib drops it; see readOpenRefusal) and returns BrokerRefusedError with it
 *   (`NOT_ALLOWED - vhost x not found`) and the rabbitmqctl commands that create the vhost or grant
 *   the user access to it;
 * - anything else (connection refused, timeout, unknown host, a broker shutting down):
 *   BrokerUnreachableError with the cause and how to start RabbitMQ.
 * Every message carries the URL with its password masked.
 * @param url the URL the connection was made with
 * @param error what amqplib rejected with
 * @param timeoutMilliseconds how long the vhost question may take
 */
export async function amqpConnectFailure(
  url: string,
  error: unknown,
  timeoutMilliseconds = 5000,
): Promise<BrokerUnreachableError | BrokerRefusedError> {
  const address = redactUrl(url);
  const text = messageOf(error);
  const { user, vhost, host } = loginOf(url);
  const refused = (what: string, answer: string, hint: string) =>
    new BrokerRefusedError('RabbitMQ', address, URL_KEY, what, answer, hint);

  const login = ACCESS_REFUSED.exec(text);
  if (login) {
    const remoteGuest =
      user === 'guest' && !['localhost', '127.0.0.1', '::1'].includes(host)
        ? ' RabbitMQ lets guest log in from localhost only: use another user.'
        : '';
    return refused(
      `the user name "${user}" and password`,
      login[1]!,
      `Correct them in ${URL_KEY} (amqp://<user>:<password>@host:port/<vhost>); RabbitMQ does not say ` +
        `which is wrong. If the user exists, set its password: rabbitmqctl change_password ` +
        `${shellWord(user)} '<password>'; if not, create it: rabbitmqctl add_user ${shellWord(user)} ` +
        `'<password>' && rabbitmqctl set_permissions -p ${shellWord(vhost)} ${shellWord(user)} '.*' '.*' '.*'.` +
        remoteGuest,
    );
  }

  if (CLOSED_AT_OPEN.test(text)) {
    const reply = await readOpenRefusal(url, timeoutMilliseconds);
    const grant = `rabbitmqctl set_permissions -p ${shellWord(vhost)} ${shellWord(user)} '.*' '.*' '.*'`;
    const create = `rabbitmqctl add_vhost ${shellWord(vhost)} && ${grant}`;
    const what = `the virtual host "${vhost}"`;
    if (!reply) {
      return refused(
        what,
        `it closed the connection at connection.open (${text})`,
        `The vhost may not exist (create it: ${create}), or the user may not use it (${grant}); ` +
          `or correct the vhost, the URL's path, in ${URL_KEY}.`,
      );
    }
    if (/not found/i.test(reply.replyText)) {
      return refused(
        what,
        reply.replyText,
        `It does not exist: create it with ${create}, or correct the vhost (the URL's path) in ${URL_KEY}.`,
      );
    }
    if (/refused for user/i.test(reply.replyText)) {
      return refused(
        what,
        reply.replyText,
        `The user "${user}" has no permissions on it: ${grant}, or use a vhost it may use.`,
      );
    }
    return refused(
      what,
      reply.replyText,
      `See rabbitmqctl list_vhosts and rabbitmqctl list_user_permissions ${shellWord(user)}.`,
    );
  }

  return new BrokerUnreachableError('RabbitMQ', address, RABBITMQ_START_HINT, error);
}
