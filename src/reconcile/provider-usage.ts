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

/**
 * Stores the provider's own usage records for reconciliation (usage_mismatch).
 * Idempotent per (provider, provider job ref, import id): importing the same records
 * again changes nothing and says so.
 */
export async function importProviderUsage(db: Queryable, importId: string, records: UsageRecord[]): Promise<{ imported: number; already_imported: number }> {
  if (records.length === 0) return { imported: 0, already_imported: 0 };
  const result = await db.query(
    `insert into provider_usage (provider, provider_job_ref, import_id, usage)
     select * from unnest($1::text[], $2::text[], $3::text[], $4::jsonb[])
     on conflict on constraint provider_usage_pkey do nothing`,
    [
      records.map((r) => r.provider),
      records.map((r) => r.provider_job_ref),
      records.map(() => importId),
      records.map((r) => JSON.stringify(r.usage)),
    ],
  );
  const imported = result.rowCount ?? 0;
  return { imported, already_imported: records.length - imported };
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
  const rows = parseCsv(content, { columns: true, skip_empty_lines: true, trim: true }) as Record<string, string>[];
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
