import { createHash } from 'node:crypto';
import { parse as parseCsv } from 'csv-parse/sync';
import type { Queryable } from '../db/pool.js';
import { validateUsage, type Usage } from '../pricing/index.js';

export interface UsageRecord {
  provider: string;
  provider_job_ref: string;
  usage: Usage;
}

export class InvalidUsageFile extends Error {
  readonly code = 'invalid_usage_records';
}

/** The import id was used before for other usage of the same job: refused, nothing stored. */
export class ImportIdReused extends Error {
  readonly code = 'import_id_reused';
}

/**
 * Stores the provider's own usage records for reconciliation (usage_mismatch).
 * Idempotent per import id: importing the same records again under the same id
 * changes nothing and says so (already_imported). The same id with different usage
 * for a job it already holds is refused (ImportIdReused) rather than silently keeping
 * the first numbers; so is one import that gives one job two different usages. Runs
 * in the caller's transaction; an advisory lock on the import id orders concurrent
 * imports of the same id.
 */
export async function importProviderUsage(db: Queryable, importId: string, records: UsageRecord[]): Promise<{ imported: number; already_imported: number }> {
  if (records.length === 0) return { imported: 0, already_imported: 0 };
  const seen = new Map<string, { usage: string; index: number }>();
  records.forEach((r, index) => {
    const id = JSON.stringify([r.provider, r.provider_job_ref]);
    const usage = canonicalUsage(r.usage);
    const earlier = seen.get(id);
    if (earlier && earlier.usage !== usage) {
      throw new InvalidUsageFile(`records ${earlier.index + 1} and ${index + 1} give ${r.provider}/${r.provider_job_ref} different usage`);
    }
    seen.set(id, earlier ?? { usage, index });
  });
  const params = [
    importId,
    records.map((r) => r.provider),
    records.map((r) => r.provider_job_ref),
    records.map((r) => JSON.stringify(r.usage)),
  ];
  await db.query('select pg_advisory_xact_lock(hashtextextended($1, 7))', [`provider_usage:${importId}`]);
  const conflict = await db.query<{ provider: string; provider_job_ref: string }>(
    `select p.provider, p.provider_job_ref
     from unnest($2::text[], $3::text[], $4::jsonb[]) as r(provider, provider_job_ref, usage)
     join provider_usage p on p.provider = r.provider and p.provider_job_ref = r.provider_job_ref and p.import_id = $1
     where p.usage <> r.usage
     limit 1`,
    params,
  );
  const first = conflict.rows[0];
  if (first) {
    throw new ImportIdReused(`import ${importId} already holds other usage for ${first.provider}/${first.provider_job_ref}; use a new import id for new numbers`);
  }
  const result = await db.query(
    `insert into provider_usage (provider, provider_job_ref, import_id, usage)
     select r.provider, r.provider_job_ref, $1, r.usage from unnest($2::text[], $3::text[], $4::jsonb[]) as r(provider, provider_job_ref, usage)
     on conflict on constraint provider_usage_pkey do nothing`,
    params,
  );
  const imported = result.rowCount ?? 0;
  return { imported, already_imported: records.length - imported };
}

function canonicalUsage(usage: UsageRecord['usage']): string {
  return JSON.stringify(Object.entries(usage).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

export function validateRecord(input: unknown, where: string): UsageRecord {
  const record = input as Partial<UsageRecord> | null;
  if (!record || typeof record !== 'object') throw new InvalidUsageFile(`${where}: expected an object`);
  if (typeof record.provider !== 'string' || record.provider === '') throw new InvalidUsageFile(`${where}: provider is required`);
  if (typeof record.provider_job_ref !== 'string' || record.provider_job_ref === '') throw new InvalidUsageFile(`${where}: provider_job_ref is required`);
  try {
    return { provider: record.provider, provider_job_ref: record.provider_job_ref, usage: validateUsage(record.usage) };
  } catch (error) {
    throw new InvalidUsageFile(`${where}: usage: ${(error as Error).message}`);
  }
}

/**
 * JSON lines ({provider, provider_job_ref, usage}) or CSV with a header
 * `provider,provider_job_ref,<dimension>,<dimension>…`. The import id is the file's
 * SHA-256, so importing one file twice imports it once.
 */
export function parseUsageFile(content: string): { importId: string; records: UsageRecord[] } {
  const importId = `file:${createHash('sha256').update(content).digest('hex').slice(0, 32)}`;
  const trimmed = content.trimStart();
  if (trimmed.startsWith('{')) {
    const records = content
      .split('\n')
      .map((line, index) => ({ line: line.trim(), index }))
      .filter(({ line }) => line !== '')
      .map(({ line, index }) => {
        let parsed: unknown;
        try {
          parsed = JSON.parse(line);
        } catch {
          throw new InvalidUsageFile(`line ${index + 1}: not valid JSON`);
        }
        return validateRecord(parsed, `line ${index + 1}`);
      });
    return { importId, records };
  }
  const rows = parseCsv(content, { bom: true, columns: true, skip_empty_lines: true, trim: true }) as Record<string, string>[];
  const records = rows.map((row, index) => {
    const { provider, provider_job_ref, ...dimensions } = row;
    const usage: Record<string, number> = {};
    for (const [dimension, value] of Object.entries(dimensions)) {
      if (value === '') continue;
      if (!/^\d+$/.test(value)) throw new InvalidUsageFile(`row ${index + 2}: ${dimension} must be a non-negative integer`);
      usage[dimension] = Number(value);
    }
    return validateRecord({ provider, provider_job_ref, usage }, `row ${index + 2}`);
  });
  return { importId, records };
}
