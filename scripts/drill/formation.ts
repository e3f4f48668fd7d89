import { appendFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Cleanup } from './cleanup.js';
import { freePort } from '../../bench/free-port.js';
import { kill, postmasterPidOf, type Killed, type KillMode } from './kill.js';
import { MonitorState, isWhole } from './monitor-state.js';
import { PgAutoctl } from './pg-autoctl.js';
import type { Toolchain } from './preflight.js';
import { waitFor, type LoggedProcess } from './processes.js';

/**
 * A pg_auto_failover formation on this machine: a monitor and two data nodes, a primary
 * and a standby in the replication quorum (synchronous), each a `pg_autoctl run` keeper
 * supervising its PostgreSQL. pg_auto_failover decides everything that follows — who is
 * primary, when to fail over, how the old primary rejoins; the drill only looks (the
 * monitor's tables) and kills.
 */

export interface DataNode {
  name: string;
  port: number;
  pgdata: string;
  /** its `pg_autoctl run`; a new one once a killed node is started again */
  keeper: LoggedProcess;
  logPath: string;
}

/** The one database the formation serves, and Tally's. */
export const DATABASE = 'tally';

// pg_autoctl sizes memory for a dedicated server (shared_buffers a quarter of RAM);
// three servers on one shared machine get a small footprint instead. Appended after
// pg_autoctl's include, so these win. And commit timestamps, for the drill's figures.
const SMALL_FOOTPRINT = `
# tally failover drill: three servers share this machine
shared_buffers = '128MB'
effective_cache_size = '512MB'
maintenance_work_mem = '64MB'
# when each settlement committed (the drill measures kill → first commit on the new primary)
track_commit_timestamp = on
`;

export class Formation {
  private constructor(
    private readonly autoctl: PgAutoctl,
    private readonly monitorData: string,
    readonly monitor: MonitorState,
    readonly nodes: DataNode[],
  ) {}

  static async create(tools: Toolchain, root: string, logDir: string, cleanup: Cleanup, say: (line: string) => void): Promise<Formation> {
    const autoctl = new PgAutoctl(tools, root);
    const common = ['--pgctl', autoctl.pgCtl, '--hostname', '127.0.0.1', '--auth', 'trust', '--ssl-self-signed'];
    const monitorPort = await freePort();
    const monitorData = join(root, 'monitor');
    say(`pg_autoctl create monitor (port ${monitorPort})`);
    await autoctl.command(['create', 'monitor', '--pgdata', monitorData, '--pgport', String(monitorPort), ...common]);
    await appendFile(join(monitorData, 'postgresql.conf'), SMALL_FOOTPRINT);
    const monitorKeeper = autoctl.keeper('monitor', monitorData, join(logDir, 'pg_autoctl-monitor.log'));
    cleanup.add('stop the monitor', () => stopKeeper(monitorKeeper, monitorData));
    const monitor = new MonitorState(monitorPort);
    cleanup.add('close the connection to the monitor', () => monitor.end());
    await waitFor('the monitor answers', async () => (await monitor.nodes(), true), 60_000);

    const monitorUri = `postgres://autoctl_node@127.0.0.1:${monitorPort}/pg_auto_failover?sslmode=require`;
    const nodes: DataNode[] = [];
    for (const name of ['node1', 'node2']) {
      const port = await freePort();
      const pgdata = join(root, name);
      say(`pg_autoctl create postgres ${name} (port ${port})${nodes.length > 0 ? ': a base backup of node1, its standby' : ''}`);
      await autoctl.command([
        ...['create', 'postgres', '--pgdata', pgdata, '--pgport', String(port), '--listen', '127.0.0.1', '--name', name],
        ...['--dbname', DATABASE, '--monitor', monitorUri, '--replication-quorum', 'true', '--candidate-priority', '50', ...common],
      ]);
      // The standby is a base backup of the primary's folder, configuration included.
      if (nodes.length === 0) await appendFile(join(pgdata, 'postgresql.conf'), SMALL_FOOTPRINT);
      const logPath = join(logDir, `pg_autoctl-${name}.log`);
      const node: DataNode = { name, port, pgdata, logPath, keeper: autoctl.keeper(name, pgdata, logPath) };
      cleanup.add(`stop ${name}`, () => stopKeeper(node.keeper, pgdata));
      nodes.push(node);
      // The standby copies the primary, so the primary must be up and registered first.
      if (nodes.length === 1) {
        await waitFor(
          `${name} running as a single node`,
          async () => (await monitor.nodes()).some((n) => n.name === name && n.reportedState === 'single'),
          120_000,
        );
      }
    }
    const formation = new Formation(autoctl, monitorData, monitor, nodes);
    await formation.waitWhole(180_000);
    return formation;
  }

  /** Until there is one primary and a synchronous standby, each in the state the monitor assigned. */
  async waitWhole(timeoutMs: number): Promise<void> {
    await waitFor('the formation reaching primary + secondary', async () => isWhole(await this.monitor.nodes()), timeoutMs, 200);
  }

  async primary(): Promise<DataNode> {
    const primary = (await this.monitor.nodes()).find((n) => n.reportedState === 'primary' && n.goalState === 'primary');
    if (!primary) throw new Error('the monitor names no primary');
    return this.byName(primary.name);
  }

  /** SIGKILL to the node (kill.ts says what each mode kills). */
  kill(node: DataNode, mode: KillMode): Killed {
    return kill(mode, node.pgdata, node.keeper.pid);
  }

  /**
   * A killed node's `pg_autoctl run` started again, as after its machine came back:
   * pg_auto_failover then has it rewind (pg_rewind) and follow the new primary.
   */
  restartKeeper(node: DataNode): void {
    if (node.keeper.running()) return;
    node.keeper = this.autoctl.keeper(node.name, node.pgdata, node.logPath);
  }

  /** `pg_autoctl show uri --formation default`: the multi-host URL pg_auto_failover gives applications. */
  async formationUri(): Promise<string> {
    const output = await this.autoctl.command(['show', 'uri', '--formation', 'default', '--pgdata', this.monitorData]);
    const uri = output.split('\n').find((line) => /^postgres(ql)?:\/\//.test(line.trim()));
    if (!uri) throw new Error(`pg_autoctl show uri printed no URL:\n${output}`);
    return uri.trim();
  }

  /** `pg_autoctl get formation settings`: number_sync_standbys, synchronous_standby_names, each node's quorum and priority. */
  settings(): Promise<string> {
    return this.autoctl.command(['get', 'formation', 'settings', '--pgdata', this.monitorData]);
  }

  /** `pg_autoctl show events`, for the run's logs. */
  showEvents(count: number): Promise<string> {
    return this.autoctl.command(['show', 'events', '--count', String(count), '--pgdata', this.monitorData]);
  }

  byName(name: string): DataNode {
    const node = this.nodes.find((n) => n.name === name);
    if (!node) throw new Error(`the monitor names an unknown node ${name}`);
    return node;
  }
}

/** The keeper stops its PostgreSQL on SIGTERM; a postmaster it left behind (keeper killed) is SIGKILLed. */
async function stopKeeper(keeper: LoggedProcess, pgdata: string): Promise<void> {
  await keeper.stop('SIGTERM', 20_000);
  const orphan = postmasterPidOf(pgdata);
  if (orphan !== null) process.kill(orphan, 'SIGKILL');
}
