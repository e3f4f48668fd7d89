import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DISTRIBUTED_TABLES, REFERENCE_TABLES, citusDistributionSql } from '../../src/db/distribution.js';
import { distributionProblems } from '../support/citus-catalog.js';
import { freshDatabase } from '../support/database.js';

/**
 * Issue 28.3: the migrated schema is ready to be distributed by tenant with Citus. Every
 * table is distributed by tenant_id, a reference table, or distributed apart by a key that
 * must be unique across tenants (src/db/distribution.ts), and
 * the catalog of a freshly migrated database has nothing Citus would refuse or could not
 * enforce (test/support/citus-catalog.ts says what). This runs on plain PostgreSQL: what
 * only a Citus cluster can show is listed in docs/operations/scaling.md.
 */

const db = await freshDatabase({ max: 2 });

describe('the schema, read from pg_catalog, against src/db/distribution.ts', () => {
  it('has every table distributed by tenant_id, a reference table or distributed by its own key, and every key of a distributed table includes its distribution column', async () => {
    expect(await distributionProblems(db.pool)).toEqual([]);
  });

  it('fails on each kind of violation planted in it', async () => {
    const client = await db.pool.connect();
    try {
      await client.query('begin');
      await client.query('create table planted_unlisted (id uuid primary key)');
      await client.query('create table planted_tenantless (id uuid primary key)');
      await client.query('create table planted_nullable (id uuid, tenant_id uuid, unique (id, tenant_id))');
      // A unique key without tenant_id, then foreign keys that use it: from a distributed
      // table (no tenant_id pair) and from a reference table (to a distributed one).
      await client.query('create unique index planted_jobs_id_key on jobs (id)');
      await client.query('alter table settlements add constraint planted_settlements_job_fkey foreign key (job_id) references jobs (id)');
      await client.query('alter table providers add column planted_job uuid constraint planted_providers_job_fkey references jobs (id)');
      // A table distributed by its own key: a unique index without that key, and a foreign
      // key to it from a tenant's table (the two are not co-located).
      await client.query('create unique index planted_event_keys_tenant_key on webhook_event_keys (tenant_id)');
      await client.query(
        'alter table webhook_events add constraint planted_events_claim_fkey foreign key (provider, event_key) references webhook_event_keys (provider, event_key)',
      );
      // A table listed before the one its foreign key names.
      await client.query(
        'alter table planted_nullable add constraint planted_nullable_job_fkey foreign key (id, tenant_id) references jobs (id, tenant_id)',
      );
      const lists = {
        distributed: ['planted_nullable', ...Object.keys(DISTRIBUTED_TABLES), 'planted_tenantless'],
        reference: Object.keys(REFERENCE_TABLES),
      };
      const problems = await distributionProblems(client, lists);
      expect(problems).toEqual(
        expect.arrayContaining([
          expect.stringMatching(/^planted_unlisted is neither distributed by tenant_id nor a reference table/),
          'planted_tenantless is distributed but has no tenant_id column',
          'planted_nullable.tenant_id may be null',
          'jobs: unique index planted_jobs_id_key (id) leaves out tenant_id',
          expect.stringMatching(/^settlements: foreign key planted_settlements_job_fkey .* does not pair tenant_id with tenant_id$/),
          expect.stringMatching(/^providers is a reference table, but its foreign key planted_providers_job_fkey names jobs/),
          expect.stringMatching(/^planted_nullable is listed before jobs, which its foreign key planted_nullable_job_fkey names/),
          'webhook_event_keys: unique index planted_event_keys_tenant_key (tenant_id) leaves out event_key',
          expect.stringMatching(
            /^webhook_events: foreign key planted_events_claim_fkey names webhook_event_keys, but .* \(not co-located\)$/,
          ),
        ]),
      );
      expect(problems).toHaveLength(9);
    } finally {
      await client.query('rollback');
      client.release();
    }
  });

  it('is spread by the calls docs/operations/scaling.md shows', () => {
    const doc = readFileSync(new URL('../../docs/operations/scaling.md', import.meta.url), 'utf8');
    expect(doc, 'paste citusDistributionSql() into scaling.md again').toContain(citusDistributionSql());
  });
});
