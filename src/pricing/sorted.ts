/**
 * Entries in code-unit order of their keys, not localeCompare: the order must
 * not depend on the machine's locale, or two workers would write different
 * snapshots for the same usage.
 */
export function sortedEntries<T>(record: Readonly<Record<string, T>>): Array<[string, T]> {
  return Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}
