/**
 * From the URL `pg_autoctl show uri --formation default` prints to the DATABASE_URL
 * Tally is given. Two changes, both needed with the node-postgres Tally uses
 * (docs/operations/failover-drill.md, "The URL to give Tally"):
 *
 * - a user: pg_autoctl prints none (libpq would take the OS user's name);
 * - `uselibpqcompat=true` beside pg_autoctl's `sslmode`: node-postgres otherwise reads
 *   `sslmode=require` (and `prefer`) as `verify-full`, and a server with a self-signed
 *   certificate (`--ssl-self-signed`) is refused — "self-signed certificate". With it,
 *   `require` means what libpq means: encrypted, certificate not verified. With real
 *   certificates, use `sslmode=verify-full` and `sslrootcert` instead.
 *
 * The hosts and `target_session_attrs=read-write` are kept as printed: Tally reads
 * libpq's multi-host form itself (src/db/hosts.ts).
 */
export function tallyDatabaseUrl(formationUri: string, user: string): string {
  const match = /^(postgres(?:ql)?:\/\/)(?:[^@/?#]*@)?(.*)$/i.exec(formationUri);
  if (!match) throw new Error(`not a postgres:// URL: ${formationUri}`);
  const [, scheme, rest] = match as unknown as [string, string, string];
  const withUser = `${scheme}${encodeURIComponent(user)}@${rest}`;
  if (!/[?&]sslmode=/.test(withUser) || /[?&]uselibpqcompat=/.test(withUser)) return withUser;
  return `${withUser}&uselibpqcompat=true`;
}
