import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { coalesceWrites } from '../src/index.ts';

/** A stream that records each write it gets from its buffer: one entry per `writev` or `write`. */
function recordingStream(): { stream: Writable; batches: string[][] } {
  const batches: string[][] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      batches.push([chunk.toString()]);
      done();
    },
    writev(chunks, done) {
      batches.push(chunks.map(({ chunk }) => (chunk as Buffer).toString()));
      done();
    },
  });
  return { stream, batches };
}

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('coalesceWrites (the frames of one event-loop turn leave in one system call)', () => {
  it('sends the writes of one task as one batch', async () => {
    const { stream, batches } = recordingStream();
    coalesceWrites(stream);
    stream.write('reply');
    stream.write('event');
    stream.write('ack');
    await nextTurn();
    assert.deepEqual(batches, [['reply', 'event', 'ack']]);
  });

  it('sends writes made in the promise continuations of the same turn with them', async () => {
    const { stream, batches } = recordingStream();
    coalesceWrites(stream);
    const confirmed = Promise.resolve();
    stream.write('reply');
    await confirmed;
    stream.write('ack');
    await confirmed.then(() => undefined);
    stream.write('next reply');
    await nextTurn();
    assert.deepEqual(batches, [['reply', 'ack', 'next reply']]);
  });

  it('sends the writes of two callbacks of one phase of the turn together (two socket reads, two timers)', async () => {
    const { stream, batches } = recordingStream();
    coalesceWrites(stream);
    // Two timers due together run in the same timers phase, one task each, as two I/O callbacks of
    // one poll phase do (a delivery from RabbitMQ, then a reply from Redis).
    await new Promise<void>((resolve) => {
      setTimeout(() => stream.write('reply after a Redis reply'), 0);
      setTimeout(() => {
        stream.write('ack after a confirm');
        resolve();
      }, 0);
    });
    await nextTurn();
    assert.deepEqual(batches, [['reply after a Redis reply', 'ack after a confirm']]);
  });

  it('does not hold a write past its turn: the next turn starts a new batch', async () => {
    const { stream, batches } = recordingStream();
    coalesceWrites(stream);
    stream.write('first');
    await nextTurn();
    assert.deepEqual(batches, [['first']]);
    stream.write('second');
    await nextTurn();
    assert.deepEqual(batches, [['first'], ['second']]);
  });

  it('is idempotent: coalescing twice changes nothing', async () => {
    const { stream, batches } = recordingStream();
    coalesceWrites(stream);
    coalesceWrites(stream);
    stream.write('a');
    stream.write('b');
    await nextTurn();
    assert.deepEqual(batches, [['a', 'b']]);
  });
});
