import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy between a pg pool and PostgreSQL (the tests' and the simulation's: sim/ may
 * not import test/) that can cut a connection exactly at
 * COMMIT, to produce the one failure whose outcome is unknown to the client.
 *
 * It parses the client → server byte stream into protocol messages (the untyped
 * startup messages first, then `type + int32 length + body`). When armed, the first
 * simple-query message ('Q') whose text is `commit` triggers the cut:
 *
 * - mode 'after': the COMMIT is forwarded and the server side half-closed, then the
 *   client socket destroyed at once. The server commits (it reads the COMMIT before
 *   the end of the stream); the client only sees its connection die.
 * - mode 'before': both sockets are destroyed and the COMMIT is never forwarded; the
 *   server sees the connection end inside the transaction and rolls it back.
 *
 * `holdCommit` (mode 'after') keeps the COMMIT in the proxy after the client socket is
 * gone, until releaseCommit(): a COMMIT still in flight while the client already
 * tries to find out what happened — the server commits *after* the client's first
 * look.
 *
 * `thenUnreachable` additionally makes the database unreachable through the proxy
 * from that instant: every other connection is destroyed and new ones are dropped on
 * arrival, until reachable() is called.
 *
 * `ran` narrows the cut to the COMMIT of a transaction that ran a statement whose text
 * matches it (e.g. the insert of a settlement): a client's other transactions commit
 * meanwhile untouched. Without it, the first COMMIT of any transaction is cut — which in
 * a worker is often an idle poll's empty transaction, not the one the test is about.
 * The statement's text is known from the Parse message (a named statement is parsed once
 * per connection and then only bound by name) or the simple query.
 */
export type CutMode = 'after' | 'before';

const SSL_REQUEST = 80_877_103;
const GSSENC_REQUEST = 80_877_104;
const SIMPLE_QUERY = 0x51; // 'Q'
const PARSE = 0x50; // 'P'
const BIND = 0x42; // 'B'

interface Link {
  client: Socket;
  server: Socket;
  cut: boolean;
  /** prepared statements' texts by name ('' is the unnamed one) */
  statements: Map<string, string>;
  /** texts of the statements the open transaction ran (bound or simple); null outside a transaction */
  ran: string[] | null;
}

interface Armed {
  mode: CutMode;
  thenUnreachable: boolean;
  holdCommit: boolean;
  ran: RegExp | null;
}

/** The NUL-terminated string of `message` at `offset`, and the offset after it. */
function cstring(message: Buffer, offset: number): [string, number] {
  const end = message.indexOf(0, offset);
  return [message.subarray(offset, end).toString('utf8'), end + 1];
}

export class CommitCuttingProxy {
  private armed: Armed | null = null;
  private held: (() => void) | null = null;
  private unreachable = false;
  private readonly links = new Set<Link>();
  private cuts: { mode: CutMode; query: string; ran: string[] }[] = [];

  private constructor(
    private readonly server: Server,
    readonly port: number,
    private readonly target: { host: string; port: number },
  ) {}

  /** Listens on an ephemeral localhost port, forwarding to the server of `databaseUrl`. */
  static async start(databaseUrl: string): Promise<CommitCuttingProxy> {
    const url = new URL(databaseUrl);
    const target = { host: url.hostname, port: Number(url.port || 5432) };
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const address = server.address();
    if (!address || typeof address === 'string') throw new Error('the proxy has no TCP address');
    const proxy = new CommitCuttingProxy(server, address.port, target);
    server.on('connection', (socket) => proxy.accept(socket));
    return proxy;
  }

  /** `databaseUrl` with its host and port replaced by the proxy's. */
  urlFor(databaseUrl: string): string {
    const url = new URL(databaseUrl);
    url.hostname = '127.0.0.1';
    url.port = String(this.port);
    return url.toString();
  }

  /** Cut the next COMMIT that passes (once): of any transaction, or of one that `ran` a matching statement. */
  arm(mode: CutMode, options: { thenUnreachable?: boolean; holdCommit?: boolean; ran?: RegExp } = {}): void {
    this.armed = {
      mode,
      thenUnreachable: options.thenUnreachable ?? false,
      holdCommit: options.holdCommit ?? false,
      ran: options.ran ?? null,
    };
  }

  /** Forwards a COMMIT held by arm('after', { holdCommit: true }). */
  releaseCommit(): void {
    if (!this.held) throw new Error('no COMMIT is held');
    const forward = this.held;
    this.held = null;
    forward();
  }

  disarm(): void {
    this.armed = null;
  }

  reachable(): void {
    this.unreachable = false;
  }

  /** Disarmed, reachable, no cuts on record: as started. */
  reset(): void {
    this.armed = null;
    this.unreachable = false;
    this.cuts = [];
    this.held?.();
    this.held = null;
  }

  /** Every cut made so far, in order, with the statements its transaction ran. */
  get fired(): readonly { mode: CutMode; query: string; ran: string[] }[] {
    return this.cuts;
  }

  get openConnections(): number {
    return this.links.size;
  }

  async close(): Promise<void> {
    for (const link of this.links) this.drop(link);
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket): void {
    if (this.unreachable) {
      client.on('error', () => {});
      client.destroy();
      return;
    }
    const server = connect(this.target.port, this.target.host);
    const link: Link = { client, server, cut: false, statements: new Map(), ran: null };
    this.links.add(link);
    client.setNoDelay(true);
    server.setNoDelay(true);
    client.on('error', () => this.drop(link));
    server.on('error', () => this.drop(link));
    client.on('close', () => {
      if (!link.cut) server.end();
      this.links.delete(link);
    });
    server.on('close', () => {
      client.destroy();
      this.links.delete(link);
    });
    server.on('data', (chunk: Buffer) => {
      if (!link.cut && !client.destroyed) client.write(chunk);
    });

    let pending: Buffer = Buffer.alloc(0);
    let startup = true;
    client.on('data', (chunk: Buffer) => {
      if (link.cut) return;
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      for (;;) {
        if (startup) {
          // StartupMessage, SSLRequest, GSSENCRequest: int32 length (itself included), int32 code
          if (pending.length < 8) return;
          const length = pending.readInt32BE(0);
          if (pending.length < length) return;
          const code = pending.readInt32BE(4);
          server.write(pending.subarray(0, length));
          pending = pending.subarray(length);
          if (code !== SSL_REQUEST && code !== GSSENC_REQUEST) startup = false;
          continue;
        }
        if (pending.length < 5) return;
        const total = 1 + pending.readInt32BE(1);
        if (pending.length < total) return;
        const message = pending.subarray(0, total);
        pending = pending.subarray(total);
        if (message[0] === SIMPLE_QUERY) {
          const query = message.subarray(5, total - 1).toString('utf8');
          if (/^\s*commit\s*;?\s*$/i.test(query)) {
            if (this.armed && (!this.armed.ran || (link.ran ?? []).some((text) => this.armed!.ran!.test(text)))) {
              this.cut(link, message, query);
              return;
            }
            link.ran = null;
          } else if (/^\s*(begin|start transaction)\b/i.test(query)) {
            link.ran = [];
          } else if (/^\s*rollback\b/i.test(query)) {
            link.ran = null;
          } else {
            link.ran?.push(query);
          }
        } else if (message[0] === PARSE) {
          const [name, at] = cstring(message, 5);
          link.statements.set(name, cstring(message, at)[0]);
        } else if (message[0] === BIND) {
          const [, at] = cstring(message, 5); // the portal
          const text = link.statements.get(cstring(message, at)[0]);
          if (text !== undefined) link.ran?.push(text);
        }
        server.write(message);
      }
    });
  }

  private cut(link: Link, commit: Buffer, query: string): void {
    const { mode, thenUnreachable, holdCommit } = this.armed!;
    const ran = link.ran ?? [];
    this.armed = null;
    link.cut = true;
    if (mode === 'after') {
      // Forward the COMMIT and end our side of the stream: PostgreSQL reads the
      // COMMIT, commits, then sees end-of-file. The client never hears back.
      if (holdCommit) this.held = () => link.server.end(commit);
      else link.server.end(commit);
    } else {
      link.server.destroy();
    }
    link.client.destroy();
    this.links.delete(link);
    if (thenUnreachable) {
      this.unreachable = true;
      for (const other of this.links) this.drop(other);
    }
    this.cuts.push({ mode, query, ran });
  }

  private drop(link: Link): void {
    link.cut = true;
    link.client.destroy();
    link.server.destroy();
    this.links.delete(link);
  }
}
