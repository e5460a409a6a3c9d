import { Writable } from 'node:stream';
import { repeatedJsonKeys } from './json-keys.ts';

/** A writable stream that keeps every log line written to it (pass it as a pino destination). */
export class CapturedLines extends Writable {
  readonly lines: string[] = [];

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: () => void): void {
    for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) this.lines.push(line);
    callback();
  }

  /** Every line as one string, for "never appears" assertions. */
  get text(): string {
    return this.lines.join('\n');
  }

  /** The lines that name a key twice in one object (JSON.parse would keep the last), with those keys. */
  linesWithRepeatedKeys(): Array<{ line: string; keys: string[] }> {
    return this.lines
      .map((line) => ({ line, keys: repeatedJsonKeys(line) }))
      .filter((each) => each.keys.length > 0);
  }

  /** The lines parsed as JSON objects. */
  records(): Array<Record<string, unknown>> {
    return this.lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  }
}
