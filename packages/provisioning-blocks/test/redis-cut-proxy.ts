import { createConnection, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy in front of Redis that, once a client sends a command containing (case-insensitively) every one of
 * `trigger`'s lower-case strings, forwards that command (so Redis executes it) but no byte of any reply from then
 * on: the clients see a Redis that stopped answering right after it committed the command — the
 * moment a process dies between an effect and what follows it. Commands still reach Redis.
 */
export class RedisCutProxy {
  private readonly sockets = new Set<Socket>();
  private cut = false;
  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  /** Listens on 127.0.0.1 (an ephemeral port) and forwards to `target` (host:port). */
  static async start(
    target: { host: string; port: number },
    trigger: ReadonlyArray<string>,
  ): Promise<RedisCutProxy> {
    let proxy: RedisCutProxy | null = null;
    const server = createServer((client) => {
      const upstream = createConnection(target);
      proxy?.sockets.add(client).add(upstream);
      client.on('data', (chunk: Buffer) => {
        upstream.write(chunk);
        if (proxy && !proxy.cut) {
          const text = chunk.toString('latin1').toLowerCase();
          if (trigger.every((part) => text.includes(part))) proxy.cut = true;
        }
      });
      upstream.on('data', (chunk: Buffer) => {
        if (!proxy?.cut) client.write(chunk);
      });
      const close = () => {
        client.destroy();
        upstream.destroy();
      };
      client.on('error', close).on('close', close);
      upstream.on('error', close).on('close', close);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('proxy has no TCP address');
    proxy = new RedisCutProxy(server, address.port);
    return proxy;
  }

  /** True once the trigger command went through (and replies stopped). */
  get hasCut(): boolean {
    return this.cut;
  }

  /** Closes every connection and the listener. */
  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }
}
