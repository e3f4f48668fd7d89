import { join } from 'node:path';
import type { Toolchain } from './preflight.js';
import { runToEnd, startLogged, type LoggedProcess } from './processes.js';

/**
 * pg_autoctl, run as the `postgres` user with everything it keeps inside the drill's
 * temp dir: its configuration and state files go under XDG_CONFIG_HOME and
 * XDG_DATA_HOME (by default they would land in the postgres user's home and outlive
 * the drill), and PATH leads to the PostgreSQL that has the pgautofailover extension.
 */
export class PgAutoctl {
  constructor(
    private readonly tools: Toolchain,
    /** the drill's temp dir, owned by `postgres` */
    private readonly root: string,
  ) {}

  private get env(): Record<string, string> {
    return {
      PATH: `${this.tools.pgBindir}:/usr/local/bin:/usr/bin:/bin`,
      HOME: this.root,
      XDG_CONFIG_HOME: join(this.root, 'config'),
      XDG_DATA_HOME: join(this.root, 'share'),
      XDG_RUNTIME_DIR: join(this.root, 'run'),
      LANG: 'C.UTF-8',
    };
  }

  get pgCtl(): string {
    return join(this.tools.pgBindir, 'pg_ctl');
  }

  /** A pg_autoctl command that ends (create, show, get); its output, or an error with it. */
  async command(args: string[]): Promise<string> {
    const { code, output } = await runToEnd(this.tools.pgAutoctl, args, { env: this.env, cwd: this.root, runAs: this.tools.postgresUser });
    if (code !== 0) throw new Error(`pg_autoctl ${args.join(' ')} exited ${code}:\n${output.slice(-3000)}`);
    return output;
  }

  /** `pg_autoctl run`: the keeper of one node (or the monitor), which starts and supervises its PostgreSQL. */
  keeper(name: string, pgdata: string, logPath: string): LoggedProcess {
    return startLogged(name, this.tools.pgAutoctl, ['run', '--pgdata', pgdata], logPath, {
      env: this.env,
      cwd: this.root,
      runAs: this.tools.postgresUser,
    });
  }
}
