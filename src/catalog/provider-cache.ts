import type pg from 'pg';
import type { Pool, Queryable } from '../db/pool.js';
import { newClient } from '../db/host-selection.js';
import { findProvider, type ProviderRow } from './providers.js';
import { openProviderSecrets } from './provider-secrets.js';

/** Every change to providers notifies this channel (migrations/0022: providers_changed). */
export const PROVIDERS_CHANNEL = 'tally_providers';

/**
 * How a webhook finds its provider: from the database, or through a ProviderCache. The
 * rows it answers hold the secrets opened (provider-secrets.ts), ready to verify; a
 * secret sealed under another server secret makes `find` throw SecretUnsealable.
 */
export interface ProviderLookup {
  find(name: string): Promise<ProviderRow | null>;
  /** this process changed a provider: forget what was read before (its own commit, no wait for the notification) */
  changed(): void;
  /**
   * The provider read again from the table, when `find` may have answered from memory
   * (null otherwise): intake's second look before it refuses a signature.
   */
  reread(name: string): Promise<ProviderRow | null>;
}

/** The provider as stored, its secrets opened with the server's secret. */
async function findOpened(db: Queryable, name: string, serverSecret: Buffer): Promise<ProviderRow | null> {
  const row = await findProvider(db, name);
  return row && openProviderSecrets(row, serverSecret);
}

export function uncachedProviders(db: Queryable, serverSecret: Buffer): ProviderLookup {
  return { find: (name) => findOpened(db, name, serverSecret), changed: () => {}, reread: async () => null };
}

/**
 * Providers as intake reads them three times per job (every delivery verifies with its
 * provider's secrets), kept in memory while this process LISTENs to providers_changed:
 * any change — a secret rotated or revoked, a new provider — empties the cache at once,
 * so a revoked secret stops verifying as soon as the notification arrives (the same
 * moment a reader of the table would see the commit, give or take the notification's
 * trip). While the notification connection is down nothing is cached: a change missed
 * then can never be served stale. A name that finds no provider is not cached (anyone
 * can send to /v1/webhooks/<any name>). Hand-written: a map and one LISTEN; a caching
 * library adds TTLs and sizes this does not want.
 */
export class ProviderCache implements ProviderLookup {
  private readonly entries = new Map<string, Promise<ProviderRow | null>>();
  private listener: pg.Client | null = null;
  private retry: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    private readonly pool: Pool,
    private readonly databaseUrl: string,
    private readonly serverSecret: Buffer,
    private readonly retryMs = 1_000,
  ) {}

  readonly find = (name: string): Promise<ProviderRow | null> => {
    if (!this.listener) return findOpened(this.pool, name, this.serverSecret);
    const cached = this.entries.get(name);
    if (cached) return cached;
    const read = findOpened(this.pool, name, this.serverSecret);
    this.entries.set(name, read);
    read.then(
      (row) => {
        if (row === null && this.entries.get(name) === read) this.entries.delete(name);
      },
      () => {
        if (this.entries.get(name) === read) this.entries.delete(name);
      },
    );
    return read;
  };

  readonly changed = (): void => this.entries.clear();

  readonly reread = async (name: string): Promise<ProviderRow | null> => {
    this.entries.delete(name);
    return this.find(name);
  };

  /** Starts listening; until the LISTEN is in place (or while it is lost) every find reads the table. */
  async start(): Promise<void> {
    const client = newClient(this.databaseUrl, { application_name: 'tally-serve-listen' });
    const lost = () => {
      if (this.listener === client) this.listener = null;
      this.entries.clear();
      void client.end().catch(() => {});
      this.listenAgain();
    };
    client.on('error', lost);
    client.on('end', () => {
      if (this.listener === client) lost();
    });
    client.on('notification', () => this.entries.clear());
    try {
      await client.connect();
      await client.query(`listen ${PROVIDERS_CHANNEL}`);
      // Entries read before the LISTEN could have missed a change: start empty.
      this.entries.clear();
      if (this.stopped) return void (await client.end());
      this.listener = client;
    } catch {
      await client.end().catch(() => {});
      this.listenAgain();
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retry) clearTimeout(this.retry);
    const client = this.listener;
    this.listener = null;
    this.entries.clear();
    await client?.end().catch(() => {});
  }

  private listenAgain(): void {
    if (this.stopped || this.retry) return;
    this.retry = setTimeout(() => {
      this.retry = null;
      void this.start();
    }, this.retryMs);
    this.retry.unref();
  }
}
