import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A plain TCP forwarder on a fixed local port, whose target can change: a database
 * restarted on another port stays reachable under the same DATABASE_URL. While the
 * target is down, connections are accepted and closed at once (the client sees its
 * connection end, as it would with a database that is gone).
 */
export class ForwardingProxy {
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
    private targetPort: number,
  ) {}

  static async start(targetPort: number): Promise<ForwardingProxy> {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const address = server.address();
    if (!address || typeof address === 'string') throw new Error('the proxy has no TCP address');
    const proxy = new ForwardingProxy(server, address.port, targetPort);
    server.on('connection', (socket) => proxy.accept(socket));
    return proxy;
  }

  /** `url` with its host and port replaced by the proxy's. */
  urlFor(url: string): string {
    const parsed = new URL(url);
    parsed.hostname = '127.0.0.1';
    parsed.port = String(this.port);
    return parsed.toString();
  }

  retarget(port: number): void {
    this.targetPort = port;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket): void {
    const upstream = connect(this.targetPort, '127.0.0.1');
    this.sockets.add(client);
    this.sockets.add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      this.sockets.delete(client);
      this.sockets.delete(upstream);
    };
    client.on('error', drop);
    upstream.on('error', drop);
    client.on('close', drop);
    upstream.on('close', drop);
    client.pipe(upstream);
    upstream.pipe(client);
  }
}
