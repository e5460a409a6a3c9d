import { formatTime } from '../format.ts';
import { cell, type TableView } from '../table-view.ts';
import type { DeadLetter } from './dead-letter.ts';

/**
 * The dead letters as `lifeguard dlq list` and the console's queues page show them (oldest first):
 * each with its id (for a replay), when and by whom it was dead-lettered, the queue that gave up on
 * it, its routing key, the reason, how often it was replayed, and the start of its body.
 */
export function deadLettersTable(letters: ReadonlyArray<DeadLetter>): TableView<DeadLetter> {
  return {
    id: 'dead-letters',
    columns: [
      { title: 'id' },
      { title: 'dead-lettered' },
      { title: 'by' },
      { title: 'queue' },
      { title: 'routing key' },
      { title: 'reason', textWidth: 60 },
      { title: 'replays' },
      { title: 'body', textWidth: 60 },
    ],
    rows: letters.map((letter) => ({
      subject: letter,
      cells: [
        cell(letter.id),
        cell(formatTime(letter.deadLetteredAt)),
        cell(letter.deadLetteredBy),
        cell(letter.queue),
        cell(letter.routingKey),
        cell(letter.reason),
        cell(letter.replayCount),
        cell(letter.bodyPreview, { code: true }),
      ],
    })),
  };
}
