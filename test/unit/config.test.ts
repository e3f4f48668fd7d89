import { createHash, randomUUID } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  ConfigError,
  DEFAULT_CONFIG,
  SETTINGS,
  configJson,
  configLines,
  loadConfig,
  maskUrlPassword,
  readSettings,
  settingsTable,
} from '../../src/config/index.js';
import { settlementOptions } from '../../src/cli/worker-runtime.js';
import { DUTY_INTERVAL_SECONDS, dutyIntervals } from '../../src/duties/duties.js';
import { DEFAULT_INTAKE_LIMITS, DeliveryWriter, intakeLimits } from '../../src/intake/delivery-writer.js';
import { DEFAULT_REPAIR_SETTINGS, repairSettings } from '../../src/reconcile/repair.js';
import { DEFAULT_SETTLE_SETTINGS } from '../../src/worker/settle-event.js';
import { MAX_SETTLE_ATTEMPTS } from '../../src/worker/retry-policy.js';
import { USAGE_FETCH_TIMEOUT_MS } from '../../src/worker/usage-fetch.js';
import { DEFAULT_BATCH_SIZE } from '../../src/worker/worker.js';
import { freshDatabase } from '../support/database.js';
import { createWorld, submitWorldJob } from '../support/fixtures.js';

/**
 * Issue 24.7: one configuration. Every setting is declared once (src/config/settings.ts);
 * nothing else in src/ reads the environment; a wrong value is refused with a sentence
 * naming it; README's table is the declaration's. Issue 34.4: the commands (src/cli/) read
 * it once, at start, and hand the values down; no module reads it when it loads.
 */

const db = await freshDatabase({ max: 8 });

const root = fileURLToPath(new URL('../../', import.meta.url));

async function sourceFiles(folder: string): Promise<string[]> {
  const entries = await readdir(folder, { withFileTypes: true });
  const nested = await Promise.all(
    entries.map((entry) =>
      entry.isDirectory()
        ? sourceFiles(join(folder, entry.name))
        : Promise.resolve(entry.name.endsWith('.ts') ? [join(folder, entry.name)] : []),
    ),
  );
  return nested.flat();
}

const configError = (env: Record<string, string>): ConfigError => {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error(`${JSON.stringify(env)} was accepted`);
};

describe('the environment is read in one place', () => {
  it('no file in src/ outside src/config/ reads process.env', async () => {
    const readers: string[] = [];
    for (const file of await sourceFiles(join(root, 'src'))) {
      const path = relative(root, file).replaceAll('\\', '/');
      if (path.startsWith('src/config/')) continue;
      const text = await readFile(file, 'utf8');
      // process.env, process['env'], const { env } = process: every way to reach it.
      text.split('\n').forEach((line, i) => {
        if (/process\s*(\.|\[\s*['"`])\s*env\b|\{[^}]*\benv\b[^}]*\}\s*=\s*process\b/.test(line))
          readers.push(`${path}:${i + 1}: ${line.trim()}`);
      });
    }
    expect(readers, 'read the setting from the Config the command hands down (src/config/) instead').toEqual([]);
  });

  it('only the commands (src/cli/) read the process configuration; every other module is handed its values', async () => {
    // The name, not only a call: an import is a reader waiting to happen (an alias too).
    const readers: string[] = [];
    for (const file of await sourceFiles(join(root, 'src'))) {
      const path = relative(root, file).replaceAll('\\', '/');
      if (path.startsWith('src/config/') || path.startsWith('src/cli/')) continue;
      (await readFile(file, 'utf8')).split('\n').forEach((line, i) => {
        if (/\bprocess(Config|Readings)\b/.test(line)) readers.push(`${path}:${i + 1}: ${line.trim()}`);
      });
    }
    expect(
      readers,
      "take the value as a parameter (an option, a constructor's settings) from the command that starts, with DEFAULT_CONFIG's as the default",
    ).toEqual([]);
  });

  it('every setting has a distinct variable, a doc line and a default text', () => {
    const names = Object.values(SETTINGS).map((setting) => setting.env);
    expect(new Set(names).size).toBe(names.length);
    for (const setting of Object.values(SETTINGS)) {
      expect(setting.doc.length, setting.env).toBeGreaterThan(10);
      expect(setting.defaultText.length, setting.env).toBeGreaterThan(0);
    }
  });
});

describe('the values the commands hand down', () => {
  const silent = { info: () => {}, warn: () => {}, error: () => {} };

  it("are the configuration's; with none handed down, each module's default is the setting's", () => {
    const options = settlementOptions(
      loadConfig({
        TALLY_LEASE_SECONDS: '9',
        TALLY_POLL_INTERVAL_MS: '50',
        TALLY_SETTLE_BATCH_SIZE: '5',
        TALLY_SETTLE_CLAIM: 'leased',
        TALLY_MAX_ATTEMPTS: '3',
        TALLY_USAGE_FETCH_TIMEOUT_MS: '250',
      }),
    );
    expect(options).toMatchObject({
      leaseSeconds: 9,
      pollIntervalMs: 50,
      batchSize: 5,
      firstAttempts: 'leased',
      settle: { maxAttempts: 3, usageFetchTimeoutMs: 250 },
    });
    expect(intakeLimits(loadConfig({ TALLY_INTAKE_GROUPS_IN_FLIGHT: '3', TALLY_INTAKE_MAX_GROUP: '7' }))).toEqual({
      groupsInFlight: 3,
      maxGroup: 7,
    });
    expect(repairSettings(loadConfig({ TALLY_LEASE_SECONDS: '9', TALLY_MAX_ATTEMPTS: '3' }))).toMatchObject({
      leaseSeconds: 9,
      maxAttempts: 3,
    });
    expect(dutyIntervals(loadConfig({ TALLY_RECONCILE_INTERVAL_SECONDS: '0' }))).toEqual({ ...DUTY_INTERVAL_SECONDS, reconcile: 0 });

    // The defaults that were read from the environment when the modules loaded are the same
    // values still: the setting's default, declared once.
    expect(DEFAULT_CONFIG).toEqual(loadConfig({}));
    const defaults = settlementOptions(DEFAULT_CONFIG);
    expect(defaults.batchSize).toBe(DEFAULT_BATCH_SIZE);
    expect(defaults.settle).toEqual(DEFAULT_SETTLE_SETTINGS);
    expect(DEFAULT_SETTLE_SETTINGS).toEqual({ maxAttempts: MAX_SETTLE_ATTEMPTS, usageFetchTimeoutMs: USAGE_FETCH_TIMEOUT_MS });
    expect([DEFAULT_BATCH_SIZE, MAX_SETTLE_ATTEMPTS, USAGE_FETCH_TIMEOUT_MS]).toEqual([32, 8, 10_000]);
    expect(DEFAULT_INTAKE_LIMITS).toEqual({ groupsInFlight: 2, maxGroup: 128 });
    expect(DEFAULT_REPAIR_SETTINGS).toEqual({ leaseSeconds: 60, maxAttempts: 8, usageFetchTimeoutMs: 10_000 });
    expect(DUTY_INTERVAL_SECONDS.reconcile).toBe(300);
  });

  it('TALLY_RECONCILE_INTERVAL_SECONDS reaches the duties the worker command hands its workers', async () => {
    const runs = async () => Number((await db.pool.query<{ n: string }>('select count(*) as n from reconciliation_runs')).rows[0]!.n);
    // 0: scheduled reconciliation is off, however often the duties are offered.
    const off = settlementOptions(loadConfig({ TALLY_RECONCILE_INTERVAL_SECONDS: '0' }));
    await off.duties!(db.pool, silent);
    await off.duties!(db.pool, silent);
    expect(await runs()).toBe(0);
    // The default: the first offer runs one (no worker ran it in the last 300 s).
    await settlementOptions(loadConfig({})).duties!(db.pool, silent);
    expect(await runs()).toBe(1);
  });

  it('TALLY_INTAKE_MAX_GROUP reaches the commits of the intake writer made with it', async () => {
    const world = await createWorld(db.pool, { funds: 1_000_000n });
    const job = await submitWorldJob(db.pool, world);
    const groupSizes = async (writer: DeliveryWriter) => {
      const sizes: number[] = [];
      writer.onGroup = (size) => sizes.push(size);
      const attempts = Array.from({ length: 12 }, () => ({
        id: randomUUID(),
        provider: job.provider,
        eventKey: `evt_${randomUUID()}`,
        jobId: job.id,
        outcome: 'already_accepted' as const,
        payloadHash: createHash('sha256').update(randomUUID()).digest(),
        detail: null,
      }));
      expect(await Promise.all(attempts.map((attempt) => writer.write({ attempt })))).toEqual(attempts.map(() => true));
      return sizes;
    };
    // By default, the writes that find two groups in flight share the next commit.
    expect(Math.max(...(await groupSizes(new DeliveryWriter(db.pool))))).toBeGreaterThan(1);
    // TALLY_INTAKE_MAX_GROUP=1: one delivery per commit.
    const one = await groupSizes(new DeliveryWriter(db.pool, intakeLimits(loadConfig({ TALLY_INTAKE_MAX_GROUP: '1' }))));
    expect(one).toEqual(one.map(() => 1));
    expect(one).toHaveLength(12);
  });
});

describe('loadConfig', () => {
  it('gives the documented defaults for an empty environment', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      databaseUrl: undefined,
      port: 8080,
      host: '127.0.0.1',
      adminToken: undefined,
      dataDir: './.tally',
      logLevel: 'info',
      leaseSeconds: 60,
      pollIntervalMs: 1000,
      maxAttempts: 8,
      reconcileIntervalSeconds: 300,
      outboundTimeoutMs: 10_000,
      outboundLeaseSeconds: 60,
      outboundRetryHours: 72,
      checkResponses: false,
      failpoints: [],
    });
  });

  it('reads values of every kind, an empty variable as unset, and defaults that follow other settings', () => {
    const config = loadConfig({
      DATABASE_URL: 'postgres://tally:pw@h1:5432,h2:5433/tally?target_session_attrs=read-write',
      PORT: '9090',
      TALLY_ADMIN_TOKEN: '',
      LOG_LEVEL: 'debug',
      TALLY_RECONCILE_INTERVAL_SECONDS: '0',
      TALLY_OUTBOUND_TIMEOUT_MS: '45000',
      TALLY_OUTBOUND_RETRY_HOURS: '0.001',
      TALLY_CHECK_RESPONSES: '1',
      TALLY_FAILPOINTS: ' worker.after_claim , settle.before_commit',
    });
    expect(config).toMatchObject({
      port: 9090,
      host: '0.0.0.0', // DATABASE_URL set: every interface
      adminToken: undefined,
      logLevel: 'debug',
      reconcileIntervalSeconds: 0,
      outboundLeaseSeconds: 90, // 2 × 45 s
      outboundRetryHours: 0.001,
      checkResponses: true,
      failpoints: ['worker.after_claim', 'settle.before_commit'],
    });
  });

  it('names the setting, what was wrong and what is accepted', () => {
    expect(configError({ PORT: 'abc' }).message).toMatch(/^PORT: 'abc' is not a port number \(1-65535\)/);
    expect(configError({ PORT: '70000' }).problems).toEqual(["PORT: '70000' is not a port number (1-65535)"]);
    expect(configError({ TALLY_LEASE_SECONDS: '1e3' }).problems).toEqual(["TALLY_LEASE_SECONDS: '1e3' is not a whole number, 1 or more"]);
    expect(configError({ TALLY_MAX_ATTEMPTS: '0' }).problems).toEqual(["TALLY_MAX_ATTEMPTS: '0' is not a whole number, 1 or more"]);
    expect(configError({ LOG_LEVEL: 'loud' }).problems).toEqual([
      "LOG_LEVEL: 'loud' is not one of fatal, error, warn, info, debug, trace, silent",
    ]);
    expect(configError({ TALLY_OUTBOUND_RETRY_HOURS: '-1' }).problems).toEqual([
      "TALLY_OUTBOUND_RETRY_HOURS: '-1' is not a positive number of hours, e.g. 72 or 0.5",
    ]);
    expect(configError({ TALLY_CHECK_RESPONSES: 'yes' }).problems).toEqual(["TALLY_CHECK_RESPONSES: 'yes' is not 1 (on) or 0 (off)"]);
    expect(configError({ TALLY_FAILPOINTS: 'worker.after_claim,nowhere' }).problems[0]).toMatch(
      /^TALLY_FAILPOINTS: 'worker.after_claim,nowhere' is not a comma-separated list of worker.after_claim, /,
    );
    // DATABASE_URL may hold a password: a refused one is not echoed.
    expect(configError({ DATABASE_URL: 'localhost:5432' }).problems).toEqual([
      'DATABASE_URL: the value given is not a PostgreSQL URL (postgres://user:password@host:port/database)',
    ]);
    expect(configError({ TALLY_OUTBOUND_TIMEOUT_MS: '90000', TALLY_OUTBOUND_LEASE_SECONDS: '60' }).problems).toEqual([
      'TALLY_OUTBOUND_LEASE_SECONDS (60) must be longer than TALLY_OUTBOUND_TIMEOUT_MS (90000 ms): a claim must outlast its delivery',
    ]);
  });

  it('lists every problem at once, and never repeats a secret it refuses', () => {
    const error = configError({ PORT: 'x', TALLY_SECRET_KEY: 'hunter2-is-not-32-bytes', DATABASE_URL: 'mysql://root:hunter2@db/x' });
    expect(error.problems).toEqual([
      'DATABASE_URL: the value given is not a PostgreSQL URL (postgres://user:password@host:port/database)',
      "PORT: 'x' is not a port number (1-65535)",
      'TALLY_SECRET_KEY: the value given is not 32 random bytes as 64 hex characters or base64 (make one with `openssl rand -hex 32`)',
    ]);
    expect(error.message).toMatch(/^3 settings are invalid/);
    expect(error.message).not.toMatch(/hunter2/);
  });
});

describe('the effective configuration', () => {
  const env = {
    DATABASE_URL: 'postgres://tally:s3cret@db.internal:5432/tally?sslmode=require',
    TALLY_ADMIN_TOKEN: 'admin-token-value',
    TALLY_SECRET_KEY: 'a'.repeat(64),
    TALLY_METRICS_TOKEN: 'metrics-token-value',
    PORT: '9000',
  };

  it('masks secrets and the password of DATABASE_URL, and says where each value came from', () => {
    const lines = configLines(readSettings(env).readings);
    const text = lines.join('\n');
    for (const secret of ['s3cret', 'admin-token-value', 'aaaaaaaa', 'metrics-token-value']) expect(text).not.toContain(secret);
    expect(lines.find((line) => line.startsWith('DATABASE_URL='))).toMatch(
      /^DATABASE_URL=postgres:\/\/tally:\*\*\*\*@db\.internal:5432\/tally\?sslmode=require +# env$/,
    );
    expect(lines.find((line) => line.startsWith('TALLY_ADMIN_TOKEN='))).toMatch(/^TALLY_ADMIN_TOKEN=\*\*\*\*\(set\) +# env$/);
    expect(lines.find((line) => line.startsWith('PORT='))).toMatch(/^PORT=9000 +# env$/);
    expect(lines.find((line) => line.startsWith('TALLY_LEASE_SECONDS='))).toMatch(/^TALLY_LEASE_SECONDS=60 +# default$/);
    expect(lines.find((line) => line.startsWith('TALLY_API_KEY='))).toMatch(/^TALLY_API_KEY= +# unset$/);
    expect(lines.find((line) => line.startsWith('TALLY_FAILPOINTS='))).toMatch(/# default · test only$/);
    expect(lines).toHaveLength(Object.keys(SETTINGS).length);
  });

  it('as JSON: typed values, secrets masked', () => {
    const json = configJson(readSettings(env).readings);
    const byName = Object.fromEntries(json.settings.map((s: any) => [s.name, s]));
    expect(byName.PORT).toMatchObject({ value: 9000, source: 'env', default: '8080', secret: false });
    expect(byName.TALLY_ADMIN_TOKEN).toMatchObject({ value: '****(set)', source: 'env', secret: true });
    expect(byName.TALLY_API_KEY).toMatchObject({ value: null, source: 'unset' });
    expect(byName.TALLY_CHECK_RESPONSES).toMatchObject({ value: false, test_only: true });
    expect(JSON.stringify(json)).not.toMatch(/s3cret|admin-token-value|metrics-token-value/);
  });

  it('masks a password in the user info or the query string', () => {
    expect(maskUrlPassword('postgres://u:p%40ss@h1:5432,h2:5433/db')).toBe('postgres://u:****@h1:5432,h2:5433/db');
    expect(maskUrlPassword('postgresql://u@h/db?password=hunter2&sslmode=require')).toBe(
      'postgresql://u@h/db?password=****&sslmode=require',
    );
    expect(maskUrlPassword('postgres://h/db')).toBe('postgres://h/db');
  });
});

describe("README's Configuration table", () => {
  it('is the table generated from the declarations (./bin/tally config --markdown)', async () => {
    const readme = await readFile(join(root, 'README.md'), 'utf8');
    const section = /<!-- config:start -->\n([\s\S]*?)\n<!-- config:end -->/.exec(readme)?.[1];
    expect(section, 'README.md has a <!-- config:start --> … <!-- config:end --> table').toBeDefined();
    const documented = new Map([...section!.matchAll(/^\| `([A-Z_]+)` \| (.*?) \|(?= )/gm)].map((m) => [m[1]!, m[2]!]));
    const declared = Object.values(SETTINGS);
    expect(
      declared.filter((s) => !documented.has(s.env)).map((s) => s.env),
      'settings missing from README',
    ).toEqual([]);
    expect(
      [...documented.keys()].filter((name) => !declared.some((s) => s.env === name)),
      'README documents settings that do not exist',
    ).toEqual([]);
    expect(section, 'README disagrees with src/config/settings.ts: paste `./bin/tally config --markdown` between the markers').toBe(
      settingsTable(),
    );
  });

  it("keeps README's three commands first", async () => {
    const readme = await readFile(join(root, 'README.md'), 'utf8');
    expect(readme.split('\n').slice(0, 7).join('\n')).toMatch(/^# Tally\n\n```sh\nnpm ci .*\nnpm start .*\nnpm test .*\n```$/);
  });
});
