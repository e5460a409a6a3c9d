import { Writable } from 'node:stream';

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

  /** The lines parsed as JSON objects. */
  records(): Array<Record<string, unknown>> {
    return this.lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  }
}
