import pg from 'pg';

/**
 * What the pg_auto_failover monitor knows, read from its own tables
 * (pgautofailover.node, pgautofailover.event) — the same rows `pg_autoctl show state`
 * and `pg_autoctl show events` print, without starting a process per look.
 */

export interface NodeState {
  name: string;
  port: number;
  reportedState: string;
  goalState: string;
  pgIsRunning: boolean;
  /** the monitor's health check: 1 healthy, 0 unhealthy, -1 unknown yet */
  health: number;
}

export interface MonitorEvent {
  at: Date;
  node: string;
  reportedState: string;
  goalState: string;
  description: string;
}

export class MonitorState {
  private readonly pool: pg.Pool;

  constructor(port: number) {
    this.pool = new pg.Pool({
      host: '127.0.0.1',
      port,
      user: 'postgres',
      database: 'pg_auto_failover',
      max: 1,
      // The drill's nodes use self-signed certificates (--ssl-self-signed): encrypted, not verified.
      ssl: { rejectUnauthorized: false },
    });
    this.pool.on('error', () => {});
  }

  async nodes(): Promise<NodeState[]> {
    const { rows } = await this.pool.query<NodeState>(
      `select nodename as "name", nodeport as "port", reportedstate::text as "reportedState", goalstate::text as "goalState",
              reportedpgisrunning as "pgIsRunning", health
       from pgautofailover.node where formationid = 'default' order by nodeid`,
    );
    return rows;
  }

  /** The monitor's events after `since`, oldest first. */
  async eventsSince(since: Date): Promise<MonitorEvent[]> {
    const { rows } = await this.pool.query<MonitorEvent>(
      `select e.eventtime as "at", n.nodename as "node", e.reportedstate::text as "reportedState", e.goalstate::text as "goalState",
              e.description
       from pgautofailover.event e join pgautofailover.node n on n.nodeid = e.nodeid
       where e.eventtime > $1 order by e.eventid`,
      [since],
    );
    return rows;
  }

  end(): Promise<void> {
    return this.pool.end();
  }
}

/** "node1 primary, node2 secondary"; a node on its way shows reported→goal. */
export function describeStates(nodes: NodeState[]): string {
  return nodes
    .map((n) => `${n.name} ${n.reportedState === n.goalState ? n.reportedState : `${n.reportedState}→${n.goalState}`}`)
    .join(', ');
}

/** One primary and every other node a secondary, each as the monitor asked: replication is synchronous again. */
export function isWhole(nodes: NodeState[]): boolean {
  const settled = nodes.every((n) => n.reportedState === n.goalState && n.pgIsRunning);
  return (
    settled &&
    nodes.filter((n) => n.reportedState === 'primary').length === 1 &&
    nodes.every((n) => ['primary', 'secondary'].includes(n.reportedState))
  );
}
