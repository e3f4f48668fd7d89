import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  ConfigError,
  SETTINGS,
  configJson,
  configLines,
  loadConfig,
  maskUrlPassword,
  readSettings,
  settingsTable,
} from '../../src/config/index.js';

/**
 * Issue 24.7: one configuration. Every setting is declared once (src/config/settings.ts);
 * nothing else in src/ reads the environment; a wrong value is refused with a sentence
 * naming it; README's table is the declaration's.
 */

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

  it('below the CLI, only the module-level knobs read the process configuration; everything else is handed its values', async () => {
    // Each is a constant fixed when its module loads (as the variable was before), or a
    // test knob deep in the settle path that no call chain should carry.
    const knobs = [
      'src/duties/duties.ts', // TALLY_RECONCILE_INTERVAL_SECONDS
      'src/failpoints.ts', // TALLY_FAILPOINTS (tests)
      'src/intake/delivery-writer.ts', // TALLY_INTAKE_GROUPS_IN_FLIGHT, TALLY_INTAKE_MAX_GROUP
      'src/outbound/enqueue.ts', // TALLY_CHECK_RESPONSES (tests)
      'src/queue/claim.ts', // TALLY_LEASE_SECONDS (the default of repairs' claims)
      'src/worker/retry-policy.ts', // TALLY_MAX_ATTEMPTS
      'src/worker/usage-fetch.ts', // TALLY_USAGE_FETCH_TIMEOUT_MS
      'src/worker/worker.ts', // TALLY_SETTLE_BATCH_SIZE (the default; the CLI passes it)
    ];
    const callers: string[] = [];
    for (const file of await sourceFiles(join(root, 'src'))) {
      const path = relative(root, file).replaceAll('\\', '/');
      if (path.startsWith('src/config/') || path.startsWith('src/cli/')) continue;
      if ((await readFile(file, 'utf8')).includes('processConfig(')) callers.push(path);
    }
    expect(callers.sort(), 'take the value as a parameter from the command instead').toEqual(knobs);
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
