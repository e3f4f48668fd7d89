import type { Setting } from './kinds.js';
import type { Reading } from './load.js';
import { SETTINGS } from './settings.js';

/** The password of a PostgreSQL URL (in its user info or its query string) as `****`. */
export function maskUrlPassword(url: string): string {
  return url.replace(/^(postgres(?:ql)?:\/\/[^:@/?#]*:)[^@/?#]*@/i, '$1****@').replace(/([?&]password=)[^&#]*/i, '$1****');
}

/** A value as `tally config` shows it: secrets masked, lists comma-separated, unset empty. */
export function shown(setting: Setting<unknown>, value: unknown): string {
  if (value === undefined) return '';
  if (setting.secret === 'secret') return '****(set)';
  if (setting.secret === 'url-password') return maskUrlPassword(String(value));
  if (Array.isArray(value)) return value.join(',');
  if (typeof value === 'boolean') return value ? '1' : '0';
  return String(value);
}

/** `NAME=value  # env | default | unset [· test only]`, one line per setting. */
export function configLines(readings: readonly Reading[]): string[] {
  const pairs = readings.map(({ setting, value }) => `${setting.env}=${shown(setting, value)}`);
  const width = Math.max(...pairs.map((pair) => pair.length));
  return readings.map(({ setting, value, source }, i) => {
    const from = value === undefined ? 'unset' : source;
    return `${pairs[i]!.padEnd(width)}  # ${from}${setting.testOnly ? ' · test only' : ''}`;
  });
}

/** The same as JSON: typed values (secrets masked), where each came from, and the declaration. */
export function configJson(readings: readonly Reading[]): { settings: object[] } {
  return {
    settings: readings.map(({ setting, value, source }) => ({
      name: setting.env,
      value: value === undefined ? null : setting.secret ? shown(setting, value) : value,
      source: value === undefined ? 'unset' : source,
      default: setting.defaultText,
      secret: setting.secret !== undefined,
      test_only: setting.testOnly === true,
      doc: setting.doc,
    })),
  };
}

const cell = (text: string) => text.replace(/\|/g, '\\|');

/** README's "Configuration" table, generated from SETTINGS (test/unit/config.test.ts compares). */
export function settingsTable(): string {
  const rows = Object.values(SETTINGS).map((setting: Setting<unknown>) => {
    const notes = setting.testOnly ? '*Tests only.* ' : setting.secret === 'secret' ? '*Secret* (masked by `tally config`). ' : '';
    const after = setting.secret === 'url-password' ? '; `tally config` masks its password' : '';
    const literal = /^[\w./:-]+$/.test(setting.defaultText) && !['unset', 'none'].includes(setting.defaultText);
    const fallback = literal ? `\`${setting.defaultText}\`` : setting.defaultText;
    return `| \`${setting.env}\` | ${cell(fallback)} | ${cell(notes + setting.doc + after)} |`;
  });
  return ['| variable | default | meaning |', '| --- | --- | --- |', ...rows].join('\n');
}
