export default function testOutcomes(source: AsyncIterable<unknown>): AsyncGenerator<never, void, unknown>;
