/**
 * Listen errors an operator fixes with a setting: the address is taken or not permitted (the port
 * setting), or not one of this machine's (the host setting). Shared by every process that serves
 * /healthz and /metrics, so each names the same cause in the same words.
 */
const LISTEN_PROBLEMS: Readonly<
  Record<string, { readonly setting: 'port' | 'host'; readonly problem: string }>
> = {
  EADDRINUSE: {
    setting: 'port',
    problem: 'the address is already in use by another process; stop it or choose a free port',
  },
  EACCES: {
    setting: 'port',
    problem: 'listening on this port is not permitted for this user; choose a port above 1023',
  },
  EADDRNOTAVAIL: { setting: 'host', problem: 'the host address is not one of this machine’s addresses' },
  // A host that is no address and no name the resolver knows (`999.1.1.1`, a misspelt name).
  ENOTFOUND: {
    setting: 'host',
    problem:
      'the host is neither an IP address nor a name that resolves; give one of this machine’s addresses',
  },
  EAI_AGAIN: {
    setting: 'host',
    problem:
      'the host name could not be resolved (the resolver did not answer); give one of this machine’s addresses',
  },
};

/** What a server's listen error says to change, or null when no setting can fix it. */
export function listenProblem(
  error: unknown,
): { readonly code: string; readonly setting: 'port' | 'host'; readonly problem: string } | null {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  if (code === undefined || !Object.hasOwn(LISTEN_PROBLEMS, code)) return null;
  return { code, ...LISTEN_PROBLEMS[code]! };
}
