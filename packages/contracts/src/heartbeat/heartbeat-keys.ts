import { readFileSync } from 'node:fs';

export interface HeartbeatKeyProblem {
  readonly path: string;
  readonly problem: string;
}

/**
 * Loads the heartbeat HMAC keys as InstanceHA does (docs/instance-ha-rules.md#environment): files named by
 * HEARTBEAT_HMAC_KEY_PATH and HEARTBEAT_HMAC_KEY_PREVIOUS_PATH, each holding the key hex-encoded;
 * an unset path or an empty file gives no key; a file that cannot be read (missing included) or is not
 * hex is reported and gives no key. 0, 1 or 2 keys.
 */
export function loadHeartbeatKeys(paths: ReadonlyArray<string | undefined>): {
  keys: Buffer[];
  problems: HeartbeatKeyProblem[];
} {
  const keys: Buffer[] = [];
  const problems: HeartbeatKeyProblem[] = [];
  for (const path of paths) {
    if (!path) continue;
    let text: string;
    try {
      text = readFileSync(path, 'utf8').trim();
    } catch (error) {
      problems.push({
        path,
        problem: `cannot read: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
      });
      continue;
    }
    if (text === '') continue;
    if (!/^([0-9a-fA-F]{2})+$/.test(text)) {
      problems.push({ path, problem: 'not hex-encoded' });
      continue;
    }
    keys.push(Buffer.from(text, 'hex'));
  }
  return { keys, problems };
}
