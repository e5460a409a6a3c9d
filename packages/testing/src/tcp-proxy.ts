import { createServer, type Server, Socket } from 'node:net';

/** Where a TcpProxy listens and where it forwards to. */
export interface TcpProxyOptions {
  /** Address to listen on (default 127.0.0.1). */
  readonly listenHost?: string;
  /** Port to listen on; 0 picks a free one (default). */
  readonly listenPort?: number;
  /** Address of the service behind the proxy (default 127.0.0.1). */
  readonly targetHost?: string;
  readonly targetPort: number;
  /** Delay added to every chunk in each direction, in milliseconds (default 0). */
  readonly delayMilliseconds?: number;
}

/**
 * A TCP forwarder between a client and a service that a test can slow down or cut, as a network
 * between two machines can be: `setDelay` holds every chunk that long (order kept) in both
 * directions; `cut` stops forwarding without closing anything (bytes are held, new connections are
 * accepted and held: the peers see silence, as behind a partition, not a reset); `heal` forwards what
 * was held and carries on; `resetConnections` closes every connection (the peers see a reset).
 */
export interface TcpProxy {
  readonly host: string;
  readonly port: number;
  /** Connections opened through the proxy so far. */
  readonly connectionsOpened: number;
  setDelay(milliseconds: number): void;
  cut(): void;
  heal(): void;
  resetConnections(): void;
  /** Closes the listener and every connection. */
  stop(): Promise<void>;
}

/** One direction of one connection: chunks released in order, each not before its due time. */
class Pipe {
  private readonly queue: Array<{ chunk: Buffer; due: number }> = [];
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly to: Socket,
    private readonly state: { delay: number; cut: boolean },
  ) {}

  push(chunk: Buffer): void {
    this.queue.push({ chunk, due: Date.now() + this.state.delay });
    this.pump();
  }

  pump(): void {
    if (this.timer !== null) return;
    while (this.queue.length > 0 && !this.state.cut) {
      const wait = this.queue[0]!.due - Date.now();
      if (wait > 0) {
        this.timer = setTimeout(() => {
          this.timer = null;
          this.pump();
        }, wait);
        return;
      }
      const { chunk } = this.queue.shift()!;
      if (!this.to.destroyed) this.to.write(chunk);
    }
  }

  stop(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.queue.length = 0;
  }
}

/**
 * Starts a TcpProxy (see the interface) and resolves once it listens.
 * @throws the listen error (address in use, address not assigned)
 */
export async function startTcpProxy(options: TcpProxyOptions): Promise<TcpProxy> {
  const state = { delay: options.delayMilliseconds ?? 0, cut: false };
  const targetHost = options.targetHost ?? '127.0.0.1';
  const connections = new Set<{ client: Socket; service: Socket; pipes: Pipe[] }>();
  let opened = 0;
  const server: Server = createServer((client) => {
    opened += 1;
    const service = new Socket();
    const toService = new Pipe(service, state);
    const toClient = new Pipe(client, state);
    const connection = { client, service, pipes: [toService, toClient] };
    connections.add(connection);
    const close = () => {
      connections.delete(connection);
      toService.stop();
      toClient.stop();
      client.destroy();
      service.destroy();
    };
    client.on('data', (chunk: Buffer) => toService.push(chunk));
    service.on('data', (chunk: Buffer) => toClient.push(chunk));
    client.on('close', close);
    service.on('close', close);
    client.on('error', close);
    service.on('error', close);
    service.connect(options.targetPort, targetHost);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: options.listenHost ?? '127.0.0.1', port: options.listenPort ?? 0 }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    host: options.listenHost ?? '127.0.0.1',
    port,
    get connectionsOpened() {
      return opened;
    },
    setDelay(milliseconds) {
      state.delay = milliseconds;
    },
    cut() {
      state.cut = true;
    },
    heal() {
      state.cut = false;
      for (const connection of connections) for (const pipe of connection.pipes) pipe.pump();
    },
    resetConnections() {
      for (const connection of [...connections]) {
        connection.client.destroy();
        connection.service.destroy();
      }
    },
    async stop() {
      for (const connection of [...connections]) {
        connection.client.destroy();
        connection.service.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
