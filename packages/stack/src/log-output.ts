import type { Writable } from 'node:stream';
import { styleText } from 'node:util';
import { prettyFactory } from 'pino-pretty';

/**
 * How the stack shows its processes' output: `pretty` (one readable line per record, prefixed with
 * the process name), `json` (the workers' pino JSON lines unchanged, other lines wrapped as JSON),
 * `silent` (nothing; `onLogLine` still sees every line).
 */
export const LOG_FORMATS = ['pretty', 'json', 'silent'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/** One line of a process's output. */
export interface WorkerLogLine {
  /** The process name (`node-monitor`, `evacuation-worker-2`, `stack`, `cloud-sim`). */
  readonly worker: string;
  readonly stream: 'stdout' | 'stderr';
  /** The line as written, without its line end. */
  readonly text: string;
  /** The line parsed as a JSON object (a pino record), or null. */
  readonly record: Readonly<Record<string, unknown>> | null;
}

/** Parses a line as a JSON object, or returns null. */
export function parseRecord(text: string): Record<string, unknown> | null {
  if (!text.startsWith('{')) return null;
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

/** Cuts a byte stream into lines; the last incomplete line is kept until more arrives or `flush`. */
export class LineSplitter {
  private pending = '';

  constructor(private readonly onLine: (line: string) => void) {}

  push(chunk: Buffer | string): void {
    this.pending += typeof chunk === 'string' ? chunk : chunk.toString('utf8');
    let end = this.pending.indexOf('\n');
    while (end >= 0) {
      const line = this.pending.slice(0, end).replace(/\r$/, '');
      this.pending = this.pending.slice(end + 1);
      if (line.length > 0) this.onLine(line);
      end = this.pending.indexOf('\n');
    }
  }

  flush(): void {
    if (this.pending.length > 0) this.onLine(this.pending);
    this.pending = '';
  }
}

const NAME_COLORS = ['cyan', 'magenta', 'yellow', 'green', 'blue', 'redBright', 'cyanBright'] as const;

/** Writes process output in the chosen format, each process's name in its own colour. */
export class LogPrinter {
  private readonly pretty: (record: unknown) => string;
  private readonly colours = new Map<string, (typeof NAME_COLORS)[number]>();

  constructor(
    private readonly format: LogFormat,
    private readonly output: Writable,
    private readonly colour: boolean,
    private readonly nameWidth: number,
  ) {
    this.pretty = prettyFactory({
      colorize: colour,
      singleLine: true,
      translateTime: 'SYS:HH:MM:ss.l',
      ignore: 'pid,hostname,service,instance',
    });
  }

  private styled(name: string): string {
    const padded = name.padEnd(this.nameWidth);
    if (!this.colour) return padded;
    let colour = this.colours.get(name);
    if (!colour) {
      colour = NAME_COLORS[this.colours.size % NAME_COLORS.length]!;
      this.colours.set(name, colour);
    }
    return styleText(colour, padded);
  }

  print(line: WorkerLogLine): void {
    if (this.format === 'silent') return;
    if (this.format === 'json') {
      const text =
        line.record !== null
          ? line.text
          : JSON.stringify({
              level: line.stream === 'stderr' ? 50 : 30,
              time: new Date().toISOString(),
              service: line.worker,
              stream: line.stream,
              msg: line.text,
            });
      this.output.write(`${text}\n`);
      return;
    }
    const body = line.record !== null ? this.pretty(line.record).replace(/\n+$/, '') : line.text;
    const prefix = `${this.styled(line.worker)} │ `;
    this.output.write(
      `${body
        .split('\n')
        .map((part) => prefix + part)
        .join('\n')}\n`,
    );
  }
}
