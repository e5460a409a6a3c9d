import type { Command } from '@commander-js/extra-typings';
import { DEAD_LETTER_QUEUE } from '@lifeguard/contracts';
import { positiveWholeNumber } from '../command-arguments.ts';
import { confirmAction } from '../confirm.ts';
import { CliError } from '../errors.ts';
import { formatTime, truncate } from '../output/format.ts';
import { renderTable } from '../output/table.ts';
import type { ContextProvider } from '../program.ts';
import {
  countDeadLetters,
  type DeadLetter,
  listDeadLetters,
  purgeDeadLetters,
  type ReplayResult,
  replayDeadLetters,
} from '../queries/dead-letter-queue.ts';

/** The human form of `lifeguard dlq list`. */
export function renderDeadLetters(letters: ReadonlyArray<DeadLetter>, total: number): string {
  const heading = `${total} message(s) in ${DEAD_LETTER_QUEUE}${letters.length < total ? `, showing the first ${letters.length}` : ''}`;
  if (letters.length === 0) return heading;
  return [
    heading,
    renderTable(
      ['id', 'dead-lettered', 'by', 'queue', 'routing key', 'reason', 'replays', 'body'],
      letters.map((letter) => [
        letter.id,
        formatTime(letter.deadLetteredAt),
        letter.deadLetteredBy,
        letter.queue,
        letter.routingKey,
        truncate(letter.reason ?? '-', 60),
        letter.replayCount,
        truncate(letter.bodyPreview, 60),
      ]),
    ),
  ].join('\n');
}

/** The human form of `lifeguard dlq replay`. */
export function renderReplay(results: ReadonlyArray<ReplayResult>): string {
  const replayed = results.filter((result) => result.outcome === 'replayed').length;
  const failed = results.filter((result) => result.outcome === 'failed').length;
  const summary = `${replayed} replayed, ${failed} failed, ${results.length - replayed - failed} left in ${DEAD_LETTER_QUEUE}`;
  if (results.length === 0) return `nothing to replay: ${DEAD_LETTER_QUEUE} is empty`;
  return [
    renderTable(
      ['id', 'outcome', 'detail'],
      results.map((result) => [result.id, result.outcome, result.detail]),
    ),
    summary,
  ].join('\n');
}

/** `lifeguard dlq list|replay|purge`. */
export function registerDeadLetterCommands(
  program: Command<[], { verbose?: true }>,
  context: ContextProvider,
): void {
  const dlq = program
    .command('dlq')
    .description(`the dead-letter queue (${DEAD_LETTER_QUEUE}): messages a consumer or RabbitMQ gave up on`);

  dlq
    .command('list')
    .description('reason, original queue and routing key, when, by whom, and a body preview (oldest first)')
    .option('--limit <count>', 'how many messages to show', positiveWholeNumber, 50)
    .option('--json', 'print JSON instead of a table')
    .action(async (options) => {
      const cli = context();
      const amqp = await cli.amqp();
      const total = await countDeadLetters(amqp);
      const letters = await listDeadLetters(amqp, options.limit);
      if (options.json) cli.printJson({ total, messages: letters });
      else cli.print(renderDeadLetters(letters, total));
    });

  dlq
    .command('replay')
    .description(
      'send dead letters back to the queue they failed in (confirmed publish, then removed from the dead-letter queue)',
    )
    .option('--limit <count>', 'how many messages to look at, oldest first', positiveWholeNumber, 100)
    .option('--id <id...>', 'only these messages (ids from `lifeguard dlq list`)')
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
      else cli.print(renderReplay(results));
      const failed = results.filter((result) => result.outcome === 'failed');
      if (failed.length > 0) {
        throw new CliError(
          `${failed.length} message(s) could not be replayed; they stay in ${DEAD_LETTER_QUEUE}`,
        );
      }
    });

  dlq
    .command('purge')
    .description('delete every message of the dead-letter queue (asks first; --yes to skip asking)')
    .option('--yes', 'confirm: the messages are gone for good')
    .option('--json', 'print JSON')
    .action(async (options) => {
      const cli = context();
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
    });
}
