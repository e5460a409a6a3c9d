import { connect as connectTcp, isIP, type Socket } from 'node:net';
import { connect as connectTls } from 'node:tls';

/** RabbitMQ's connection.close: the AMQP reply code and text (`530`, `NOT_ALLOWED - vhost x not found`). */
export interface ConnectionCloseReply {
  readonly replyCode: number;
  readonly replyText: string;
}

const FRAME_METHOD = 1;
const FRAME_END = 0xce;
const CONNECTION = 10;
const START = 10;
const START_OK = 11;
const TUNE = 30;
const TUNE_OK = 31;
const OPEN = 40;
const OPEN_OK = 41;
const CLOSE = 50;
const CLOSE_OK = 51;

function shortString(text: string): Buffer {
  const bytes = Buffer.from(text, 'utf8');
  return Buffer.concat([Buffer.from([Math.min(bytes.length, 255)]), bytes.subarray(0, 255)]);
}

function longString(bytes: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(bytes.length);
  return Buffer.concat([length, bytes]);
}

function methodFrame(method: number, ...fields: Buffer[]): Buffer {
  const header = Buffer.alloc(7);
  const payload = Buffer.concat([Buffer.from([0, CONNECTION, 0, method]), ...fields]);
  header.writeUInt8(FRAME_METHOD, 0);
  header.writeUInt16BE(0, 1);
  header.writeUInt32BE(payload.length, 3);
  return Buffer.concat([header, payload, Buffer.from([FRAME_END])]);
}

/** A field table with one string entry (`connection_name`, shown by rabbitmqctl list_connections). */
function clientProperties(connectionName: string): Buffer {
  return longString(
    Buffer.concat([
      shortString('connection_name'),
      Buffer.from('S'),
      longString(Buffer.from(connectionName)),
    ]),
  );
}

/**
 * Opens an AMQP 0-9-1 connection just far enough to read why RabbitMQ closes it at `connection.open`:
 * amqplib reports that only as `Expected ConnectionOpenOk; got <ConnectionClose channel:0>` and drops
 * the reply text that says what is wrong (`NOT_ALLOWED - vhost lifeguard not found`, `NOT_ALLOWED -
 * access to vhost 'lifeguard' refused for user 'guest'`). Logs in with PLAIN as amqplib does.
 * @param url `amqp[s]://user:password@host:port/vhost` (the vhost URL-encoded; none: `/`)
 * @returns the broker's connection.close reply, or null when it opened the vhost after all, did not
 *   answer within `timeoutMilliseconds`, or said anything unexpected (never throws)
 */
export function readOpenRefusal(
  url: string,
  timeoutMilliseconds = 5000,
): Promise<ConnectionCloseReply | null> {
  const target = probeTarget(url);
  if (target === null) return Promise.resolve(null);
  const { host, port, tls } = target;
  return new Promise((resolve) => {
    const socket: Socket = tls
      ? connectTls({ host, port, ...(isIP(host) ? {} : { servername: host }) })
      : connectTcp({ host, port });
    let settled = false;
    const finish = (reply: ConnectionCloseReply | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(reply);
    };
    const timer = setTimeout(() => finish(null), timeoutMilliseconds);
    socket.once('error', () => finish(null));
    socket.once('close', () => finish(null));
    socket.once(tls ? 'secureConnect' : 'connect', () =>
      socket.write(Buffer.from([0x41, 0x4d, 0x51, 0x50, 0, 0, 9, 1])),
    );
    socket.on(
      'data',
      frameReader(finish, (method, payload) => answerMethod(socket, target, finish, method, payload)),
    );
  });
}

/** Where and as whom the probe logs in, read from the AMQP URL. */
interface ProbeTarget {
  readonly host: string;
  readonly port: number;
  readonly tls: boolean;
  readonly user: string;
  readonly password: string;
  readonly vhost: string;
}

/**
 * The probe's target from `amqp[s]://user:password@host:port/vhost`: port 5672 (5671 with amqps),
 * user and password `guest` when the URL has none, vhost `/` when the path is empty; null when the
 * URL does not parse.
 */
function probeTarget(url: string): ProbeTarget | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  const host = parsed.hostname.replace(/^\[|\]$/g, '') || '127.0.0.1';
  const tls = parsed.protocol === 'amqps:';
  const port = Number(parsed.port || (tls ? 5671 : 5672));
  const user = parsed.username || parsed.password ? decodeURIComponent(parsed.username) : 'guest';
  const password = parsed.username || parsed.password ? decodeURIComponent(parsed.password) : 'guest';
  const vhost = decodeURIComponent(parsed.pathname.slice(1)) || '/';
  return { host, port, tls, user, password, vhost };
}

/**
 * Answers one connection-class method of the broker as amqplib would: start-ok (PLAIN), tune-ok
 * then open of the vhost; on open-ok closes politely (null), on close answers close-ok and finishes
 * with the broker's reply; anything else finishes with null.
 */
function answerMethod(
  socket: Socket,
  target: ProbeTarget,
  finish: (reply: ConnectionCloseReply | null) => void,
  method: number,
  payload: Buffer,
): void {
  if (method === START) {
    socket.write(
      methodFrame(
        START_OK,
        clientProperties('lifeguard:connection-diagnosis'),
        shortString('PLAIN'),
        longString(Buffer.from(`\0${target.user}\0${target.password}`, 'utf8')),
        shortString('en_US'),
      ),
    );
  } else if (method === TUNE) {
    const tuneOk = Buffer.alloc(8);
    tuneOk.writeUInt16BE(payload.readUInt16BE(4), 0);
    tuneOk.writeUInt32BE(payload.readUInt32BE(6), 2);
    tuneOk.writeUInt16BE(0, 6);
    socket.write(methodFrame(TUNE_OK, tuneOk));
    socket.write(methodFrame(OPEN, shortString(target.vhost), shortString(''), Buffer.from([0])));
  } else if (method === OPEN_OK) {
    // Opened after all: close politely, nothing to report.
    const close = Buffer.alloc(2);
    close.writeUInt16BE(200, 0);
    socket.write(methodFrame(CLOSE, close, shortString(''), Buffer.alloc(4)));
    setTimeout(() => finish(null), 200).unref();
  } else if (method === CLOSE) {
    const replyCode = payload.readUInt16BE(4);
    const length = payload.readUInt8(6);
    const replyText = payload.subarray(7, 7 + length).toString('utf8');
    socket.write(methodFrame(CLOSE_OK));
    finish({ replyCode, replyText });
  } else if (method !== CLOSE_OK) {
    finish(null);
  }
}

/**
 * The socket's `data` listener: gathers bytes into AMQP frames and hands each connection-class method
 * (method id, payload) to `onMethod`, skipping heartbeats; anything that is not such a frame, or a
 * method that cannot be read, finishes the probe with null.
 */
function frameReader(
  finish: (reply: null) => void,
  onMethod: (method: number, payload: Buffer) => void,
): (chunk: Buffer) => void {
  let received = Buffer.alloc(0);
  return (chunk) => {
    received = Buffer.concat([received, chunk]);
    while (received.length >= 8) {
      // Not a frame (method, header, body, heartbeat): e.g. the server's own protocol header.
      if (![1, 2, 3, 8].includes(received.readUInt8(0))) return finish(null);
      const size = received.readUInt32BE(3);
      if (received.length < 8 + size) return;
      const type = received.readUInt8(0);
      const payload = received.subarray(7, 7 + size);
      const end = received.readUInt8(7 + size);
      received = received.subarray(8 + size);
      if (end !== FRAME_END) return finish(null);
      if (type !== FRAME_METHOD) continue; // heartbeats
      if (payload.length < 4 || payload.readUInt16BE(0) !== CONNECTION) return finish(null);
      try {
        onMethod(payload.readUInt16BE(2), payload);
      } catch {
        finish(null);
      }
    }
  };
}
