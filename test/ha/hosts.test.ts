import { describe, expect, it } from 'vitest';
import { InvalidDatabaseUrl, describeDatabaseUrl, parseHostList } from '../../src/db/hosts.js';

/** libpq's multi-host URL, read where node-postgres cannot. */
describe('parseHostList', () => {
  it('leaves a single-host URL to node-postgres', () => {
    expect(parseHostList('postgres://u:p@db.example:5432/tally')).toBeNull();
    expect(parseHostList('postgres://u:p@db.example/tally?sslmode=require')).toBeNull();
    expect(parseHostList('postgres://u:p@db.example/tally?target_session_attrs=any')).toBeNull();
    expect(parseHostList('host=/var/run/postgresql dbname=tally')).toBeNull();
  });

  it('reads hosts with ports, IPv6 in brackets, and the default port', () => {
    const list = parseHostList('postgresql://u:p%40ss@h1:5432,[::1]:5433,h3/tally?target_session_attrs=read-write&sslmode=disable')!;
    expect(list.targetSessionAttrs).toBe('read-write');
    expect(list.hosts).toEqual([
      { host: 'h1', port: 5432 },
      { host: '::1', port: 5433 },
      { host: 'h3', port: 5432 },
    ]);
    expect(list.hosts.map((h) => list.urlFor(h))).toEqual([
      'postgresql://u:p%40ss@h1:5432/tally?sslmode=disable',
      'postgresql://u:p%40ss@[::1]:5433/tally?sslmode=disable',
      'postgresql://u:p%40ss@h3:5432/tally?sslmode=disable',
    ]);
  });

  it('checks one host when target_session_attrs asks, and any host of several without it', () => {
    const one = parseHostList('postgres://h1:6000/tally?target_session_attrs=primary')!;
    expect(one.hosts).toEqual([{ host: 'h1', port: 6000 }]);
    expect(one.targetSessionAttrs).toBe('primary');
    expect(one.urlFor(one.hosts[0]!)).toBe('postgres://h1:6000/tally');
    expect(parseHostList('postgres://h1,h2/tally')!.targetSessionAttrs).toBe('any');
  });

  it('refuses what Tally cannot write to, and hosts it cannot read', () => {
    expect(() => parseHostList('postgres://h1,h2/tally?target_session_attrs=standby')).toThrow(InvalidDatabaseUrl);
    expect(() => parseHostList('postgres://h1,h2/tally?target_session_attrs=prefer-standby')).toThrow(/read-write, primary or any/);
    expect(() => parseHostList('postgres://h1:99999,h2/tally')).toThrow(/port 99999/);
    expect(() => parseHostList('postgres://h1,,h2/tally')).toThrow(InvalidDatabaseUrl);
  });

  it('describes a URL for logs without its credentials', () => {
    expect(describeDatabaseUrl('postgres://u:secret@h1:5432,h2/tally?target_session_attrs=read-write')).toBe('h1:5432,h2:5432/tally');
    expect(describeDatabaseUrl('postgres://u:secret@localhost:5433/tally')).toBe('localhost:5433/tally');
  });
});
