import { createInterface } from 'node:readline/promises';
import type { CliContext } from './cli-context.ts';
import { ConfirmationRequiredError } from './errors.ts';

/**
 * Asks before a destructive action. With `--yes` it goes ahead. On a terminal it asks the operator to
 * type `answer` (the host name, or `yes`); anywhere else (scripts, CI) it refuses.
 * @throws ConfirmationRequiredError (exit 2) when not confirmed: nothing was changed
 */
export async function confirmAction(
  context: CliContext,
  options: { yes: boolean | undefined; action: string; answer: string },
): Promise<void> {
  if (options.yes) return;
  const { stdin, stderr } = context.io;
  if (!stdin.isTTY || !stderr.isTTY) throw new ConfirmationRequiredError(options.action);
  const prompt = createInterface({ input: stdin, output: stderr });
  try {
    const typed = await prompt.question(
      `Type "${options.answer}" to ${options.action}, anything else to stop: `,
    );
    if (typed.trim() !== options.answer) throw new ConfirmationRequiredError(options.action);
  } finally {
    prompt.close();
  }
}
