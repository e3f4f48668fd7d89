import type { Pool } from '../../src/db/pool.js';

export interface CaptureRefusals {
  /** from now on, every capture of these jobs fails in the database, so its transaction rolls back */
  refuse(...jobIds: string[]): Promise<void>;
  /** the job's captures succeed again (a retry can settle it) */
  allow(jobId: string): Promise<void>;
}

/**
 * A permanent failure on demand, as a real PostgreSQL error: a trigger refuses the capture
 * settlement of listed jobs on every attempt (their completions are dead-lettered), while
 * releases still pass. For a test database of its own.
 */
export async function refuseCapturesOnDemand(pool: Pool): Promise<CaptureRefusals> {
  await pool.query('create table refused_captures (job_id uuid primary key)');
  await pool.query(`
    create function refuse_listed_capture() returns trigger language plpgsql as $$
    begin
      if new.charge_type = 'capture' and exists (select 1 from refused_captures where job_id = new.job_id) then
        raise exception 'the capture of job % is refused for good by the test', new.job_id;
      end if;
      return new;
    end $$`);
  await pool.query('create trigger refuse_listed_capture before insert on settlements for each row execute function refuse_listed_capture()');
  return {
    async refuse(...jobIds) {
      await pool.query('insert into refused_captures (job_id) select unnest($1::uuid[])', [jobIds]);
    },
    async allow(jobId) {
      await pool.query('delete from refused_captures where job_id = $1', [jobId]);
    },
  };
}
