/**
 * Several hosts in one DATABASE_URL, as libpq writes them:
 * `postgres://user:pw@h1:5432,h2:5433,[::1]:5434/tally?target_session_attrs=read-write`.
 * node-postgres parses one host only (its URL parser refuses the list), so this reads
 * the list and says, for each host, the single-host URL node-postgres can connect with.
 * host-selection.ts decides which of them to use.
 */

/** The libpq values Tally can use: a standby is never where Tally writes. */
export const TARGET_SESSION_ATTRS = ['any', 'read-write', 'primary'] as const;
export type TargetSessionAttrs = (typeof TARGET_SESSION_ATTRS)[number];

export interface DatabaseHost {
  /** a name or an address; an IPv6 address without its brackets */
  host: string;
  port: number;
}

/** A DATABASE_URL that needs host selection: several hosts, or a target_session_attrs to check. */
export interface HostList {
  hosts: DatabaseHost[];
  targetSessionAttrs: TargetSessionAttrs;
  /** the URL to connect to `host` with: one host, no target_session_attrs */
  urlFor(host: DatabaseHost): string;
}

export class InvalidDatabaseUrl extends Error {}

const DEFAULT_PORT = 5432;

/**
 * The host list of `url`, or null when node-postgres takes the URL as it is: one host
 * and no target_session_attrs (or `any`), which then connects exactly as it always did.
 */
export function parseHostList(url: string): HostList | null {
  const match = /^(postgres(?:ql)?:\/\/)([^/?#]*)(.*)$/i.exec(url);
  if (!match) return null; // not a URL (a libpq key=value string): node-postgres reads it
  const [, scheme, authority, rest] = match as unknown as [string, string, string, string];
  const at = authority.lastIndexOf('@');
  const userinfo = at >= 0 ? authority.slice(0, at + 1) : '';
  const hostPart = authority.slice(at + 1);
  const { query, attrs } = withoutTargetSessionAttrs(rest);
  if (!hostPart.includes(',') && attrs === null) return null;
  const hosts = hostPart.split(',').map((item) => parseHost(item, url));
  const targetSessionAttrs = attrs ?? 'any';
  if (hosts.length === 1 && targetSessionAttrs === 'any') return null;
  return {
    hosts,
    targetSessionAttrs,
    urlFor: (host) => `${scheme}${userinfo}${host.host.includes(':') ? `[${host.host}]` : host.host}:${host.port}${query}`,
  };
}

/** `name`, `name:port`, `[v6]` or `[v6]:port`. */
function parseHost(item: string, url: string): DatabaseHost {
  const hostPort = /^(?:\[([0-9a-fA-F:.%\w]+)\]|([^:[\]]+))(?::(\d{1,5}))?$/.exec(item);
  if (!hostPort)
    throw new InvalidDatabaseUrl(
      `DATABASE_URL names a host Tally cannot read: ${JSON.stringify(item)} (write host:port, or [ipv6]:port, separated by commas)`,
    );
  const port = hostPort[3] === undefined ? DEFAULT_PORT : Number(hostPort[3]);
  if (port < 1 || port > 65_535) throw new InvalidDatabaseUrl(`DATABASE_URL names port ${port}, outside 1–65535 (in ${redacted(url)})`);
  return { host: hostPort[1] ?? hostPort[2]!, port };
}

/** The query string without target_session_attrs, and its value (null when absent). */
function withoutTargetSessionAttrs(rest: string): { query: string; attrs: TargetSessionAttrs | null } {
  const q = rest.indexOf('?');
  if (q < 0) return { query: rest, attrs: null };
  const params = new URLSearchParams(rest.slice(q + 1));
  const value = params.get('target_session_attrs');
  if (value === null) return { query: rest, attrs: null };
  if (!(TARGET_SESSION_ATTRS as readonly string[]).includes(value)) {
    throw new InvalidDatabaseUrl(
      `DATABASE_URL has target_session_attrs=${value}; Tally writes, so it takes read-write, primary or any (a standby cannot settle anything)`,
    );
  }
  params.delete('target_session_attrs');
  const remaining = params.toString();
  return { query: rest.slice(0, q) + (remaining ? `?${remaining}` : ''), attrs: value as TargetSessionAttrs };
}

/** host:port,host:port/database of a URL, without user or password, for logs. */
export function describeDatabaseUrl(url: string): string {
  const match = /^postgres(?:ql)?:\/\/(?:[^@/?#]*@)?([^/?#]*)(\/[^?#]*)?/i.exec(url);
  if (!match) return 'the database';
  const hosts = match[1]!.split(',').map((h) => (/:\d+$/.test(h) ? h : `${h}:${DEFAULT_PORT}`));
  return `${hosts.join(',')}${match[2] ?? ''}`;
}

function redacted(url: string): string {
  return url.replace(/\/\/[^@/?#]*@/, '//…@');
}
