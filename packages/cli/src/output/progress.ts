import ora, { type Ora } from 'ora';
import type { OutputStream } from '../cli-io.ts';

/** Symbols of ended steps on plain (non-terminal) output: no colour codes in logs and pipes. */
const PLAIN_SYMBOLS = { succeed: '✔', fail: '✖', warn: '⚠', info: 'ℹ' } as const;
type Ending = keyof typeof PLAIN_SYMBOLS;

/**
 * Progress of a long operation, one step at a time. On a terminal each step is a spinner that ends
 * as `✔ text` or `✖ text`; elsewhere (pipes, files, CI) each step prints a plain `- text` line when it
 * starts and a `✔`/`✖`/`⚠`/`ℹ` line when it ends, so logs stay readable.
 */
export class Progress {
  private spinner: Ora | null = null;
  private readonly interactive: boolean;

  constructor(private readonly stream: OutputStream) {
    this.interactive = stream.isTTY === true;
  }

  private make(text: string): Ora {
    return ora({
      text,
      stream: this.stream as NodeJS.WritableStream,
      isEnabled: this.interactive,
      discardStdin: false,
    });
  }

  /** Starts a step (ending any step still running as succeeded). */
  start(text: string): void {
    if (this.spinner) this.end('succeed', undefined);
    this.spinner = this.make(text).start();
  }

  /** Changes the running step's text (a terminal shows it at once; plain output waits for the end). */
  update(text: string): void {
    if (this.spinner) this.spinner.text = text;
  }

  private end(ending: Ending, text: string | undefined): void {
    const spinner = this.spinner ?? this.make(text ?? '');
    this.spinner = null;
    if (this.interactive) spinner[ending](text);
    else spinner.stopAndPersist({ symbol: PLAIN_SYMBOLS[ending], ...(text === undefined ? {} : { text }) });
  }

  /** Ends the running step as done (with `text`, else the step's own). */
  succeed(text?: string): void {
    this.end('succeed', text);
  }

  /** Ends the running step as failed. */
  fail(text?: string): void {
    this.end('fail', text);
  }

  /** Ends the running step (or prints a line) as a warning. */
  warn(text: string): void {
    this.end('warn', text);
  }

  /** Ends the running step (or prints a line) as information. */
  info(text: string): void {
    this.end('info', text);
  }

  /**
   * Prints a finished line (`✔ text`, `⚠ text`, ...) while the running step goes on: on a terminal
   * the spinner moves below the line; in plain output only the line is printed (the step's own
   * `- text` line is not repeated).
   */
  line(ending: Ending, text: string): void {
    const running = this.spinner;
    if (!running) {
      this.end(ending, text);
      return;
    }
    if (this.interactive) {
      const current = running.text;
      running[ending](text);
      this.spinner = this.make(current).start();
    } else {
      this.stream.write(`${PLAIN_SYMBOLS[ending]} ${text}\n`);
    }
  }

  /** Stops a running spinner without a final line (before printing something else). */
  stop(): void {
    this.spinner?.stop();
    this.spinner = null;
  }
}
