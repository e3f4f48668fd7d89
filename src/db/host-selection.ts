import pg from 'pg';
import { ConnectionLost, SQLSTATE } from './errors.js';
import { parseHostList, type DatabaseHost, type HostList, type TargetSessionAttrs } from './hosts.js';

/**
 * Connecting to the host of a multi-host DATABASE_URL that accepts writes, under
 * node-postgres's own Pool and Client.
 *
 * Why a thin layer rather than another driver: postgres.js parses multi-host URLs and
 * target_session_attrs, but every query, transaction, savepoint, named prepared
 * statement, LISTEN and error field of Tally is written against node-postgres, and the
 * settle path's guarantees (a COMMIT whose answer was lost is read back; a broken
 * connection is discarded) were measured and tested on it. What failover needs from a
 * driver is small — which host to open the next connection to — so that is all this
 * file adds: pg.Pool builds clients of the class below, whose connect() picks the host.
 *
 * How the host is picked:
 * - The selector remembers the host that last fitted `target_session_attrs` and opens
 *   every new connection there; the connection is then checked from what the server
 *   reports at startup (`in_hot_standby`, `default_transaction_read_only`, reported by
 *   PostgreSQL 14 and later), so a check costs no round trip. Only a server that does not
 *   report them (older, or behind a proxy that drops them) is asked with one query.
 * - A lost connection, a 57P01/57P02/57P03 (shutdown, crash, starting up) or a 25006
 *   (read-only transaction) on any connection makes it forget that host. The next
 *   connection then looks again: every host is probed at once (a host that hangs — a
 *   machine gone from the network — costs no more than the first that answers) and the
 *   first that fits wins. Connections waiting meanwhile share the one search.
 * - When none fits (the old primary is dead, the standby not yet promoted) connecting
 *   fails with ConnectionLost, which the API answers 503 and the worker retries.
 *
 * A single-host URL without target_session_attrs never comes here: createPool gives it
 * to node-postgres as it always did.
 */

/** What the server said about the session, from ParameterStatus at startup. */
interface SessionFacts {
  inHotStandby: boolean | null;
  defaultReadOnly: boolean | null;
}

interface Probe {
  host: DatabaseHost;
  /** why it does not fit, or null when it does */
  refusal: string | null;
}

/** Where one multi-host DATABASE_URL's connections go; shared by every client of that URL in the process. */
export class HostSelector {
  private current: DatabaseHost | null = null;
  private search: Promise<DatabaseHost> | null = null;

  constructor(readonly list: HostList) {}

  /** The host to open a connection to: the remembered one, or the first that fits now. */
  async choose(config: pg.ClientConfig): Promise<DatabaseHost> {
    if (this.current) return this.current;
    this.search ??= this.discover(config).finally(() => (this.search = null));
    return await this.search;
  }

  /** Where new connections go now; null while none is known (before or during a search). */
  get chosen(): DatabaseHost | null {
    return this.current;
  }

  /** The host stops being where connections go (it failed, or no longer fits). */
  forget(host: DatabaseHost): void {
    if (this.current === host) this.current = null;
  }

  describe(host: DatabaseHost): string {
    return host.host.includes(':') ? `[${host.host}]:${host.port}` : `${host.host}:${host.port}`;
  }

  private async discover(config: pg.ClientConfig): Promise<DatabaseHost> {
    const probes = this.list.hosts.map((host) => probe(this.list, host, config));
    const found = await firstFitting(probes);
    if (found) {
      this.current = found;
      return found;
    }
    const reasons = (await Promise.all(probes)).map((p) => `${this.describe(p.host)} ${p.refusal}`).join('; ');
    const wanted = this.list.targetSessionAttrs === 'any' ? 'connections' : `${this.list.targetSessionAttrs} connections`;
    throw new ConnectionLost(`no database host accepts ${wanted} now (${reasons})`);
  }
}

/** Resolves with the first probe's host that fits, or null once all have refused. */
function firstFitting(probes: Promise<Probe>[]): Promise<DatabaseHost | null> {
  return new Promise((resolve) => {
    let pending = probes.length;
    for (const p of probes) {
      void p.then((result) => {
        if (result.refusal === null) resolve(result.host);
        if (--pending === 0) resolve(null);
      });
    }
  });
}

/** Connects to one host, checks it fits, disconnects. Never rejects. */
async function probe(list: HostList, host: DatabaseHost, config: pg.ClientConfig): Promise<Probe> {
  const client = new pg.Client({ ...config, connectionString: list.urlFor(host) });
  client.on('error', () => {});
  const facts = watchFacts(client);
  try {
    await client.connect();
    return { host, refusal: await refusalOf(client, facts, list.targetSessionAttrs) };
  } catch (error) {
    const e = error as Error & { code?: string };
    return { host, refusal: `does not answer (${e.code ?? e.message})` };
  } finally {
    await client.end().catch(() => {});
  }
}

function watchFacts(client: pg.Client): SessionFacts {
  const facts: SessionFacts = { inHotStandby: null, defaultReadOnly: null };
  client.connection.on('parameterStatus', (message: { parameterName: string; parameterValue: string }) => {
    if (message.parameterName === 'in_hot_standby') facts.inHotStandby = message.parameterValue === 'on';
    if (message.parameterName === 'default_transaction_read_only') facts.defaultReadOnly = message.parameterValue === 'on';
  });
  return facts;
}

/** Why the connected session does not fit `attrs` (libpq's rules), or null when it does. */
async function refusalOf(client: pg.Client, facts: SessionFacts, attrs: TargetSessionAttrs): Promise<string | null> {
  if (attrs === 'any') return null;
  if (facts.inHotStandby === null || (attrs === 'read-write' && facts.defaultReadOnly === null)) {
    // Not reported at startup: ask (one round trip, on servers older than 14 only).
    const { rows } = await client.query<{ standby: boolean; read_only: boolean }>(
      "select pg_is_in_recovery() as standby, current_setting('transaction_read_only') = 'on' as read_only",
    );
    facts.inHotStandby = rows[0]!.standby;
    facts.defaultReadOnly = rows[0]!.read_only;
  }
  if (facts.inHotStandby) return 'is a standby (in recovery)';
  if (attrs === 'read-write' && facts.defaultReadOnly) return 'is read-only (default_transaction_read_only = on)';
  return null;
}

/** The errors after which a host is no longer trusted to be the primary. */
const HOST_LOST_SQLSTATES = new Set<string>([
  SQLSTATE.adminShutdown,
  SQLSTATE.crashShutdown,
  SQLSTATE.cannotConnectNow,
  SQLSTATE.readOnlyTransaction,
]);

type ConnectCallback = (err: Error | null, client?: pg.Client) => void;

/**
 * A pg.Client class whose connect() goes where `selector` says, checks the session fits,
 * and reports the host lost when its connection breaks or the server says it is going
 * away or read-only. pg.Pool makes its clients with it (the pool's `Client` option).
 */
export function hostSelectingClient(selector: HostSelector): typeof pg.Client {
  const existing = clientClasses.get(selector);
  if (existing) return existing;
  const made = makeClientClass(selector);
  clientClasses.set(selector, made);
  return made;
}

const clientClasses = new WeakMap<HostSelector, typeof pg.Client>();

function makeClientClass(selector: HostSelector): typeof pg.Client {
  return class HostSelectingClient extends pg.Client {
    private readonly facts = watchFacts(this);
    private chosen: DatabaseHost | null = null;

    constructor(config?: string | pg.ClientConfig) {
      super(config);
      this.on('error', () => this.hostLost());
      this.connection.on('errorMessage', (message: { code?: string }) => {
        if (message.code && HOST_LOST_SQLSTATES.has(message.code)) this.hostLost();
      });
    }

    override connect(): Promise<pg.Client>;
    override connect(callback: ConnectCallback): void;
    override connect(callback?: ConnectCallback): Promise<pg.Client> | void {
      const connected = this.connectToChosenHost();
      if (!callback) return connected;
      connected.then(
        (client) => callback(null, client),
        (error: Error) => callback(error),
      );
    }

    private async connectToChosenHost(): Promise<pg.Client> {
      const config = probeConfig(this);
      const host = await selector.choose(config);
      // pg-pool's connection timeout destroys the socket of a client still connecting.
      if (this.connection.stream.destroyed) throw new ConnectionLost('timeout exceeded when trying to connect');
      this.chosen = host;
      this.host = host.host;
      this.port = host.port;
      const parameters = (this as unknown as { connectionParameters: { host: string; port: number } }).connectionParameters;
      parameters.host = host.host;
      parameters.port = host.port;
      try {
        await super.connect();
      } catch (error) {
        this.hostLost();
        throw error;
      }
      const refusal = await refusalOf(this, this.facts, selector.list.targetSessionAttrs).catch(
        (error: Error) => `cannot be checked (${error.message})`,
      );
      if (refusal !== null) {
        this.hostLost();
        await this.end().catch(() => {});
        throw new ConnectionLost(`${selector.describe(host)} ${refusal} now; the next connection looks for the new primary`);
      }
      return this;
    }

    private hostLost(): void {
      if (this.chosen) selector.forget(this.chosen);
    }
  };
}

/** The settings of `client` for a probe: same server, credentials and TLS; its own name. */
function probeConfig(client: pg.Client): pg.ClientConfig {
  const parameters = (client as unknown as { connectionParameters: pg.ClientConfig & { application_name?: string } }).connectionParameters;
  return {
    user: parameters.user,
    password: client.password,
    database: parameters.database,
    ssl: parameters.ssl,
    connectionTimeoutMillis: (client as unknown as { _connectionTimeoutMillis: number })._connectionTimeoutMillis || 10_000,
    query_timeout: 10_000,
    application_name: `${parameters.application_name ?? 'tally'}-probe`,
  };
}

const selectors = new Map<string, HostSelector>();

/**
 * The selector for a URL that needs one (several hosts, or a target_session_attrs),
 * shared in the process: the pool, the worker's LISTEN connection and migrations follow
 * one primary. Null for a URL node-postgres takes as it is.
 */
export function selectorFor(url: string): HostSelector | null {
  const existing = selectors.get(url);
  if (existing) return existing;
  const list = parseHostList(url);
  if (!list) return null;
  const selector = new HostSelector(list);
  selectors.set(url, selector);
  return selector;
}

/**
 * A client for `url` (not yet connected), for connections of their own (LISTEN,
 * migrations, probes of locate()): node-postgres's own for a single-host URL, one that
 * picks its host otherwise.
 */
export function newClient(url: string, config: Omit<pg.ClientConfig, 'connectionString'> = {}): pg.Client {
  const selector = selectorFor(url);
  if (!selector) return new pg.Client({ ...config, connectionString: url });
  const Client = hostSelectingClient(selector);
  return new Client({ ...config, connectionString: selector.list.urlFor(selector.list.hosts[0]!) });
}
