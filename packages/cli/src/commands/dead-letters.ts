import { DEAD_LETTER_QUEUE } from '@lifeguard/contracts';
import { purgeDeadLetters, type ReplayResult, replayDeadLetters } from '@lifeguard/operator-actions';
import {
  countDeadLetters,
  DEAD_LETTER_READ_CAP,
  type DeadLetter,
  deadLettersTable,
  listDeadLetters,
} from '@lifeguard/operator-views';
import type { CliContext } from '../cli-context.ts';
import { positiveWholeNumber } from '../command-arguments.ts';
import type { ContextProvider, LifeguardProgram } from '../command-registration.ts';
import { confirmAction } from '../confirm.ts';
import { CliError } from '../errors.ts';
import { renderTable } from '../output/table.ts';
import { renderTableView } from '../output/table-view-text.ts';

/** The human form of `lifeguard dlq list`. */
export function renderDeadLetters(letters: ReadonlyArray<DeadLetter>, total: number): string {
  const heading = `${total} message(s) in ${DEAD_LETTER_QUEUE}${letters.length < total ? `, showing the first ${letters.length}` : ''}`;
  if (letters.length === 0) return heading;
  return [heading, renderTableView(deadLettersTable(letters))].join('\n');
}

/**
 * The human form of `lifeguard dlq replay`: a row per message, then the counts and `left`, how many
 * messages the dead-letter queue holds after the replay.
 */
export function renderReplay(results: ReadonlyArray<ReplayResult>, left: number): string {
  const replayed = results.filter((result) => result.outcome === 'replayed').length;
  const failed = results.filter((result) => result.outcome === 'failed').length;
  if (results.length === 0) return `nothing to replay: ${DEAD_LETTER_QUEUE} is empty`;
  return [
    renderTable(
      ['id', 'outcome', 'detail'],
      results.map((result) => [result.id, result.outcome, result.detail]),
    ),
    `${replayed} replayed, ${failed} failed, ${left} left in ${DEAD_LETTER_QUEUE}`,
  ].join('\n');
}

/**
 * Why a replay failed, or null when it did what was asked: a message could not be sent back, or a
 * message asked for by id (`asked` ids) was not there or not sent (its origin is not recorded).
 */
export function replayFailure(
  results: ReadonlyArray<ReplayResult>,
  asked: number,
  dryRun: boolean,
): CliError | null {
  const count = (outcome: ReplayResult['outcome']) =>
    results.filter((result) => result.outcome === outcome).length;
  const reasons: string[] = [];
  if (count('failed') > 0)
    reasons.push(`${count('failed')} message(s) could not be replayed; they stay in ${DEAD_LETTER_QUEUE}`);
  if (count('not-found') > 0)
    reasons.push(
      `${count('not-found')} of the ${asked} message(s) asked for are not in ${DEAD_LETTER_QUEUE}`,
    );
  if (asked > 0 && !dryRun && count('skipped') > 0)
    reasons.push(
      `${count('skipped')} of the ${asked} message(s) asked for were not replayed: their original queue is not recorded`,
    );
  return reasons.length > 0 ? new CliError(reasons.join('; ')) : null;
}

/** `lifeguard dlq purge`: deletes every dead letter, after asking (or with --yes). */
async function purge(cli: CliContext, options: { yes?: true; json?: true }): Promise<void> {
  const amqp = await cli.amqp();
  const count = await countDeadLetters(amqp);
  if (count === 0) {
    if (options.json) cli.printJson({ purged: 0 });
    else cli.print(`${DEAD_LETTER_QUEUE} is already empty`);
    return;
  }
  await confirmAction(cli, {
    yes: options.yes,
    action: `delete ${count} dead-lettered message(s) for good`,
    answer: 'purge',
  });
  const purged = await purgeDeadLetters(amqp);
  if (options.json) cli.printJson({ purged });
  else cli.print(`purged ${purged} message(s) from ${DEAD_LETTER_QUEUE}`);
}

/** `lifeguard dlq list|replay|purge`. */
export function registerDeadLetterCommands(program: LifeguardProgram, context: ContextProvider): void {
  const dlq = program
    .command('dlq')
    .description(`the dead-letter queue (${DEAD_LETTER_QUEUE}): messages a consumer or RabbitMQ gave up on`);

  dlq
    .command('list')
    .description(
      `reason, original queue and routing key, when, by whom, and a body preview (oldest first); reads the whole queue (at most ${DEAD_LETTER_READ_CAP} messages) and puts it back in its order`,
    )
    .option('--limit <count>', 'how many messages to show', positiveWholeNumber, 50)
    .option('--json', 'print JSON instead of a table')
    .action(async (options) => {
      const cli = context();
      const amqp = await cli.amqp();
      const total = await countDeadLetters(amqp);
      if (total > DEAD_LETTER_READ_CAP) {
        cli.note(
          `note: ${DEAD_LETTER_QUEUE} holds more than ${DEAD_LETTER_READ_CAP} messages; reading the first ${DEAD_LETTER_READ_CAP} puts them back behind the rest`,
        );
      }
      const letters = await listDeadLetters(amqp, options.limit);
      if (options.json) cli.printJson({ total, messages: letters });
      else cli.print(renderDeadLetters(letters, total));
    });

  dlq
    .command('replay')
    .description(
      'send dead letters back to the queue they failed in (confirmed publish, then removed from the dead-letter queue)',
    )
    .option(
      '--limit <count>',
      'how many messages to replay, oldest first (without --id)',
      positiveWholeNumber,
      100,
    )
    .option(
      '--id <id...>',
      'only these messages, wherever they are in the queue (ids from `lifeguard dlq list`)',
    )
    .option('--dry-run', 'show where each message would go; change nothing')
    .option('--json', 'print JSON instead of a table')
    .action(async (options) => {
      const cli = context();
      const results = await replayDeadLetters(await cli.amqp(), {
        limit: options.limit,
        ...(options.id ? { ids: options.id } : {}),
        replayedBy: cli.source.instance,
        dryRun: options.dryRun === true,
      });
      if (options.json) cli.printJson(results);
      else cli.print(renderReplay(results, await countDeadLetters(await cli.amqp())));
      const failure = replayFailure(results, new Set(options.id ?? []).size, options.dryRun === true);
      if (failure) throw failure;
    });

  dlq
    .command('purge')
    .description('delete every message of the dead-letter queue (asks first; --yes to skip asking)')
    .option('--yes', 'confirm: the messages are gone for good')
    .option('--json', 'print JSON')
    .action((options) => purge(context(), options));
}
