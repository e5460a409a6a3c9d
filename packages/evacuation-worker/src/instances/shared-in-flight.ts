/**
 * Shares a read among the callers that ask for the same key while it is under way, and only then: a
 * caller gets a read that started after it asked or at most one round trip before, never one that had
 * already finished (the next caller after it ended starts a new read), and a failed read is handed only
 * to the callers that were waiting for it. The instances of a host, and the hosts of one outage, start
 * together and each looks at the world before its evacuate: one look answers those that ask at once.
 */
export function sharedInFlight<Input, Value>(
  read: (input: Input) => Promise<Value>,
  keyOf: (input: Input) => string,
): (input: Input) => Promise<Value> {
  const inFlight = new Map<string, Promise<Value>>();
  return (input) => {
    const key = keyOf(input);
    const running = inFlight.get(key);
    if (running) return running;
    const look = read(input).finally(() => inFlight.delete(key));
    inFlight.set(key, look);
    return look;
  };
}
