import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP forwarder for the replication stream, which the test can stall: while stalled,
 * nothing read from the primary is passed on (the standby falls behind, as it does
 * behind a slow network or a busy disk); `cut()` then drops what it held, as a primary
 * dying takes its unsent WAL with it.
 */
export class StallableProxy {
  private readonly sockets = new Set<Socket>();
  private stalled = false;
  private readonly held: { to: Socket; chunk: Buffer }[] = [];

  private constructor(
    private readonly server: Server,
    readonly port: number,
    private readonly targetPort: number,
  ) {}

  static async start(targetPort: number): Promise<StallableProxy> {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const address = server.address();
    if (!address || typeof address === 'string') throw new Error('the proxy has no TCP address');
    const proxy = new StallableProxy(server, address.port, targetPort);
    server.on('connection', (socket) => proxy.accept(socket));
    return proxy;
  }

  /** From now on, hold what the primary sends instead of forwarding it. */
  stall(): void {
    this.stalled = true;
  }

  /** Forward again, what was held first. */
  resume(): void {
    this.stalled = false;
    for (const { to, chunk } of this.held.splice(0)) if (!to.destroyed) to.write(chunk);
  }

  /** Everything held is dropped and every connection closed; new ones are refused. */
  cut(): void {
    this.held.length = 0;
    for (const socket of this.sockets) socket.destroy();
    this.server.close();
  }

  close(): void {
    this.cut();
  }

  private accept(client: Socket): void {
    const upstream = connect(this.targetPort, '127.0.0.1');
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.on('error', () => {});
      socket.on('close', () => {
        this.sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    // The standby's requests always pass; the primary's stream waits while stalled.
    client.on('data', (chunk: Buffer) => upstream.write(chunk));
    upstream.on('data', (chunk: Buffer) => {
      if (this.stalled) this.held.push({ to: client, chunk });
      else client.write(chunk);
    });
  }
}
