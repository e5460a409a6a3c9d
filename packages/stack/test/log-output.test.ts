import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import { LineSplitter, LogPrinter, parseRecord, type WorkerLogLine } from '../src/log-output.ts';

function printed(format: 'pretty' | 'json' | 'silent', lines: WorkerLogLine[]): string {
  const output = new PassThrough();
  let text = '';
  output.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  const printer = new LogPrinter(format, output, false, 14);
  for (const line of lines) printer.print(line);
  return text;
}

const pinoLine = JSON.stringify({
  level: 40,
  time: '2026-01-02T03:04:05.678Z',
  service: 'node-monitor',
  instance: 'vm:node-monitor',
  msg: 'The following computes are down: ["compute-03"]',
  hosts: ['compute-03'],
});

describe('worker output', () => {
  it('pretty: one line per record, prefixed with the padded process name, level and message, without service/instance', () => {
    const text = printed('pretty', [
      { worker: 'node-monitor', stream: 'stdout', text: pinoLine, record: parseRecord(pinoLine) },
    ]);
    assert.match(
      text,
      /^node-monitor {3}│ \[\d\d:\d\d:\d\d\.678\] WARN: The following computes are down: \["compute-03"\] \{"hosts":\["compute-03"\]\}\n$/,
    );
    assert.doesNotMatch(text, /vm:node-monitor/);
  });

  it('pretty: a line that is not JSON (a start-up error on standard error) is shown as written, prefixed', () => {
    const text = printed('pretty', [
      {
        worker: 'fencing-worker',
        stream: 'stderr',
        text: 'LIFEGUARD_FENCING_ATTEMPTS (environment): invalid',
        record: null,
      },
    ]);
    assert.equal(text, 'fencing-worker │ LIFEGUARD_FENCING_ATTEMPTS (environment): invalid\n');
  });

  it('json: records pass unchanged; other lines become JSON records naming the process and stream', () => {
    const text = printed('json', [
      { worker: 'node-monitor', stream: 'stdout', text: pinoLine, record: parseRecord(pinoLine) },
      { worker: 'fencing-worker', stream: 'stderr', text: 'fatal: boom', record: null },
    ]);
    const [first, second] = text.trim().split('\n');
    assert.equal(first, pinoLine);
    const wrapped = JSON.parse(second!);
    assert.deepEqual(
      [wrapped.service, wrapped.stream, wrapped.msg, wrapped.level],
      ['fencing-worker', 'stderr', 'fatal: boom', 50],
    );
  });

  it('silent prints nothing', () => {
    assert.equal(printed('silent', [{ worker: 'x', stream: 'stdout', text: 'y', record: null }]), '');
  });

  it('cuts chunks into lines across chunk boundaries, drops empty lines and CRs, and flushes the last partial line', () => {
    const lines: string[] = [];
    const splitter = new LineSplitter((line) => lines.push(line));
    splitter.push('{"a":');
    splitter.push('1}\r\n\nsecond');
    splitter.push(' line\nthird');
    assert.deepEqual(lines, ['{"a":1}', 'second line']);
    splitter.flush();
    assert.deepEqual(lines, ['{"a":1}', 'second line', 'third']);
  });

  it('parses only JSON objects as records', () => {
    assert.deepEqual(parseRecord('{"msg":"x"}'), { msg: 'x' });
    assert.equal(parseRecord('[1]'), null);
    assert.equal(parseRecord('{not json'), null);
    assert.equal(parseRecord('plain'), null);
  });
});
