import { fits, type Setting } from './kinds.js';
import { SETTINGS, type SettingKey } from './settings.js';

type ValueOf<S> = S extends Setting<infer T, infer Optional> ? (Optional extends true ? T | undefined : T) : never;

/** The configuration, typed: one field per setting of SETTINGS. */
export type Config = { readonly [K in SettingKey]: ValueOf<(typeof SETTINGS)[K]> };

/** Where a setting's value came from. */
export type Source = 'env' | 'default';

/** One setting as read: its value and where it came from. */
export interface Reading {
  key: SettingKey;
  setting: Setting<unknown>;
  value: unknown;
  source: Source;
}

/** The environment refused: every problem, each a sentence naming the setting. */
export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(problems.length === 1 ? problems[0] : `${problems.length} settings are invalid:\n  ${problems.join('\n  ')}`);
    this.name = 'ConfigError';
  }
}

/** How a refused value is quoted: a secret's value never reaches a log or a terminal. */
function quoted(setting: Setting<unknown>, raw: string): string {
  return setting.secret ? 'the value given' : `'${raw}'`;
}

/**
 * Reads every setting from `env`: an unset or empty variable takes its default, a set one
 * must read as its kind and pass its schema. Every problem is collected, not just the
 * first, so one run tells the operator everything to fix.
 */
export function readSettings(env: Readonly<Record<string, string | undefined>>): { readings: Reading[]; problems: string[] } {
  const values: Record<string, unknown> = {};
  const readings: Reading[] = [];
  const problems: string[] = [];
  for (const key of Object.keys(SETTINGS) as SettingKey[]) {
    const setting = SETTINGS[key] as Setting<unknown>;
    const raw = env[setting.env];
    let value: unknown;
    let source: Source = 'default';
    if (raw === undefined || raw === '') {
      value =
        typeof setting.fallback === 'function' ? (setting.fallback as (c: Record<string, unknown>) => unknown)(values) : setting.fallback;
    } else {
      value = setting.read(raw);
      source = 'env';
      if (!fits(setting, value)) {
        problems.push(`${setting.env}: ${quoted(setting, raw)} is not ${setting.accepts}`);
        value = typeof setting.fallback === 'function' ? undefined : setting.fallback;
      }
    }
    values[key] = value;
    readings.push({ key, setting, value, source });
  }
  for (const { setting, value } of readings) {
    const problem = value === undefined ? null : (setting.across?.(value, values) ?? null);
    if (problem) problems.push(problem);
  }
  return { readings, problems };
}

/** The configuration `env` gives, or a ConfigError naming every setting that is wrong. */
export function loadConfig(env: Readonly<Record<string, string | undefined>>): Config {
  const { readings, problems } = readSettings(env);
  if (problems.length > 0) throw new ConfigError(problems);
  return Object.fromEntries(readings.map(({ key, value }) => [key, value])) as Config;
}

/**
 * Every setting's default: the configuration of an empty environment, never this process's.
 * What a module takes when the command that starts it hands it no value (a test, a
 * library call), so each default is still declared once, in SETTINGS.
 */
export const DEFAULT_CONFIG: Config = loadConfig({});

/** This process's settings as read, with where each came from, problems included (for `tally config`). */
export function processReadings(): { readings: Reading[]; problems: string[] } {
  return readSettings(process.env);
}

let loaded: Config | undefined;

/**
 * This process's configuration, read from its environment once, at the first call (every
 * CLI command makes that call before it does anything). The one place in src/ that reads
 * `process.env`; only the commands (src/cli/) call it, and hand the values down.
 */
export function processConfig(): Config {
  loaded ??= loadConfig(process.env);
  return loaded;
}

/**
 * Whether fatal errors print their stack (LOG_LEVEL=debug), for the error handler of last
 * resort, which must work even when the configuration itself is what failed.
 */
export function debugStacks(): boolean {
  return process.env.LOG_LEVEL === 'debug';
}
