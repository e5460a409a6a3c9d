import type { OpenStackClients } from '../../src/index.ts';

/** A raw HTTP answer (test set-up calls that the workers never make: boot, aggregates, flavors, images). */
export interface RawAnswer {
  status: number;
  body: unknown;
  headers: Headers;
}

/**
 * One cloud the contract suites run against: real Nova (the harness under test/harness/real-nova) or
 * cloud-sim. Everything a test needs beyond the client under test goes through here.
 */
export interface ContractTarget {
  label: string;
  clients: OpenStackClients;
  /** The nova-compute hosts, at least three. */
  hosts: string[];
  imageId: string;
  flavorId: string;
  /** An admin call to Nova at a given microversion (default 2.74: boot with `host`). */
  nova(method: string, path: string, body?: unknown, microversion?: string): Promise<RawAnswer>;
  /** A call to Glance (`/v2/...`). */
  glance(method: string, path: string, body?: unknown, contentType?: string): Promise<RawAnswer>;
  /** The host's nova-compute stops (heartbeats stop): SIGKILL on real Nova, a killed host in cloud-sim. */
  killCompute(host: string): Promise<void>;
  /** The host's nova-compute starts again (and cleans up evacuated instances). */
  startCompute(host: string): Promise<void>;
  /** Ends whatever the target started (clients, servers of its own). */
  close(): Promise<void>;
}

/** A raw JSON call with a token, for set-up. */
export async function rawCall(
  url: string,
  method: string,
  headers: Record<string, string>,
  body?: unknown,
  contentType = 'application/json',
): Promise<RawAnswer> {
  const response = await fetch(url, {
    method,
    headers: {
      accept: 'application/json',
      ...(body === undefined ? {} : { 'content-type': contentType }),
      ...headers,
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    // keep the text
  }
  return { status: response.status, body: parsed, headers: response.headers };
}

/** Throws with the answer when the status is not the expected one. */
export function expectStatus(answer: RawAnswer, ...statuses: number[]): RawAnswer {
  if (!statuses.includes(answer.status)) {
    throw new Error(
      `expected HTTP ${statuses.join(' or ')}, got ${answer.status}: ${JSON.stringify(answer.body)}`,
    );
  }
  return answer;
}
