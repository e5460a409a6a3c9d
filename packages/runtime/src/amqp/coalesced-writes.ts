import type { Writable } from 'node:stream';

const COALESCED = Symbol('lifeguard.coalescedWrites');

/**
 * Makes the writes a connection's socket gets in one turn of the event loop go out together: the
 * first write corks the socket and the end of the turn's I/O callbacks (setImmediate) uncorks it, so
 * amqplib's frames written one by one (a publish per reply, an ack, ...) leave in one `writev`
 * instead of one system call each — also those written in the promise continuations of the turn
 * (a reply published after a Redis reply, the ack after a confirm), which an uncork at the end of the
 * task would send apart. Nothing waits longer than the I/O callbacks of the turn that wrote it.
 * Idempotent.
 */
export function coalesceWrites(socket: Writable): void {
  const marked = socket as Writable & { [COALESCED]?: true };
  if (marked[COALESCED]) return;
  marked[COALESCED] = true;
  const write = socket.write;
  let corked = false;
  const uncork = () => {
    corked = false;
    socket.uncork();
  };
  socket.write = function coalescedWrite(this: Writable, ...args: Parameters<Writable['write']>) {
    if (!corked && !socket.destroyed) {
      corked = true;
      socket.cork();
      setImmediate(uncork);
    }
    return write.apply(socket, args);
  } as Writable['write'];
}

/** The socket under an amqplib connection (its `connection.stream`), when it has one. */
export function amqpSocket(model: unknown): Writable | null {
  const stream = (model as { connection?: { stream?: unknown } }).connection?.stream;
  return stream && typeof (stream as Writable).cork === 'function' ? (stream as Writable) : null;
}
