// The baseline of bench/provisioning: a bare amqplib consumer that, for each message of its input
// queue, publishes one persistent message with a publisher confirm and then acks the input — the
// broker's own ceiling for "consume, publish confirmed, ack". Started as its own process by run.ts.
//
// Environment: BENCH_AMQP_URL, BENCH_INPUT_QUEUE, BENCH_OUTPUT_QUEUE, BENCH_PREFETCH.
import amqp from 'amqplib';

const url = process.env.BENCH_AMQP_URL!;
const input = process.env.BENCH_INPUT_QUEUE!;
const output = process.env.BENCH_OUTPUT_QUEUE!;
const prefetch = Number(process.env.BENCH_PREFETCH ?? 100);

const connection = await amqp.connect(url);
const consuming = await connection.createChannel();
const publishing = await connection.createConfirmChannel();
await consuming.prefetch(prefetch);
await consuming.consume(
  input,
  (message) => {
    if (!message) return;
    publishing.publish(
      '',
      output,
      message.content,
      { persistent: true, contentType: 'application/json' },
      (error) => {
        if (error) consuming.nack(message, false, true);
        else consuming.ack(message);
      },
    );
  },
  { noAck: false },
);
process.stdout.write('ready\n');
process.on('SIGTERM', () => {
  void connection.close().finally(() => process.exit(0));
});
