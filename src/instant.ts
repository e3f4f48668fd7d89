/**
 * Instants of a wallet's history to the microsecond, the ledger clock's precision
 * (PostgreSQL timestamptz). A JavaScript Date keeps milliseconds, so an instant is kept
 * as its canonical text: RFC 3339 in UTC with six decimals ("2026-12-01T10:00:00.123456Z").
 * Canonical texts of one length compare as strings in time order.
 */

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,6}))?)?(Z|([+-])(\d{2}):(\d{2}))$/i;

/** The canonical text of an RFC 3339 instant (seconds and fraction optional), or null if it is not one (a 31 February, a 25th hour). */
export function canonicalInstant(value: string): string | null {
  const m = RFC3339.exec(value);
  if (!m) return null;
  const [year, month, day, hour, minute, second] = [m[1], m[2], m[3], m[4], m[5], m[6] ?? '00'].map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const local = new Date(Date.UTC(year, month - 1, day, hour, minute, second));
  local.setUTCFullYear(year); // Date.UTC reads years 0–99 as 1900–1999
  const fieldsKept =
    local.getUTCFullYear() === year &&
    local.getUTCMonth() === month - 1 &&
    local.getUTCDate() === day &&
    local.getUTCHours() === hour &&
    local.getUTCMinutes() === minute &&
    local.getUTCSeconds() === second;
  if (!fieldsKept) return null;
  const offsetMinutes = m[9] ? (m[9] === '-' ? -1 : 1) * (Number(m[10]) * 60 + Number(m[11])) : 0;
  if (m[9] && (Number(m[10]) > 23 || Number(m[11]) > 59)) return null;
  const utc = new Date(local.getTime() - offsetMinutes * 60_000);
  const iso = utc.toISOString();
  if (!/^\d{4}-/.test(iso) || iso.startsWith('0000')) return null; // outside years 1–9999 (PostgreSQL has no year 0)
  return `${iso.slice(0, 19)}.${(m[7] ?? '').padEnd(6, '0')}Z`;
}
