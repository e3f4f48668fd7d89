import type { Pool } from '../../src/db/pool.js';
import { ledgerViolations } from '../support/invariants.js';
import type { FuzzCase } from './cases.js';
import { Snapshots, changes, type Snapshot } from './snapshot.js';
import type { FuzzAnswer, FuzzRequest, Transport } from './transport.js';

/**
 * Runs fuzz cases one after another and judges each on its own: the answer (no 5xx, no
 * hang, the error shape for any 4xx) and the database before and after it (a refused
 * request stores and bills nothing). Sequential on purpose: the snapshot delta then
 * belongs to exactly one request.
 */
export interface Finding {
  kind: 'status_5xx' | 'hang' | 'transport_error' | 'error_shape' | 'stored_on_refusal' | 'unexpected_status';
  route: string;
  how: string;
  status?: number;
  detail: string;
  request: FuzzRequest;
  /** server log lines written while the request ran (stack traces) */
  log: string[];
}

export interface RunStats {
  cases: number;
  byRoute: Record<string, { cases: number; statuses: Record<string, number> }>;
  findings: Finding[];
}

export interface RunOptions {
  /** server log lines since the last call */
  drainLog: () => string[];
  timeoutMs?: number;
}

const SNAKE = /^[a-z][a-z0-9]*(_[a-z0-9]+)*$/;

function isErrorBody(json: unknown): boolean {
  if (json === null || typeof json !== 'object' || Array.isArray(json)) return false;
  const keys = Object.keys(json);
  const error = (json as { error?: unknown }).error as { code?: unknown; message?: unknown } | undefined;
  return (
    keys.length === 1 &&
    keys[0] === 'error' &&
    !!error &&
    typeof error.code === 'string' &&
    SNAKE.test(error.code) &&
    typeof error.message === 'string'
  );
}

/**
 * What a refusal may leave behind, by design (CONTRACT.md): an idempotent refusal that is
 * not validation (402, 404, 409) is stored as the key's answer; intake records the
 * delivery attempt of an event_mismatch (422) or event_key_conflict (409).
 */
function allowedOnRefusal(route: string, answer: FuzzAnswer, request: FuzzRequest): Set<string> {
  const allowed = new Set<string>();
  const code = (answer.json as { error?: { code?: string } } | undefined)?.error?.code;
  if ([402, 404, 409].includes(answer.status) && request.headers['idempotency-key'] !== undefined) allowed.add('idempotency_keys');
  if (route === 'POST /v1/webhooks/:provider' && (code === 'event_mismatch' || code === 'event_key_conflict'))
    allowed.add('delivery_attempts');
  return allowed;
}

async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T | 'timeout'> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), ms)));
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export async function runCases(cases: FuzzCase[], transport: Transport, pool: Pool, options: RunOptions): Promise<RunStats> {
  const stats: RunStats = { cases: 0, byRoute: {}, findings: [] };
  const snapshots = new Snapshots(pool);
  let before: Snapshot = await snapshots.take();
  options.drainLog();
  for (const fuzzCase of cases) {
    const request = fuzzCase.build();
    const route = (stats.byRoute[fuzzCase.route] ??= { cases: 0, statuses: {} });
    route.cases++;
    stats.cases++;
    const finding = (kind: Finding['kind'], detail: string, status?: number) =>
      stats.findings.push({
        kind,
        route: fuzzCase.route,
        how: fuzzCase.how,
        detail,
        request,
        log: options.drainLog(),
        ...(status !== undefined ? { status } : {}),
      });

    let answer: FuzzAnswer | 'timeout';
    try {
      answer = await withTimeout(transport(request), options.timeoutMs ?? 15_000);
    } catch (error) {
      route.statuses.thrown = (route.statuses.thrown ?? 0) + 1;
      finding('transport_error', String((error as Error)?.stack ?? error));
      before = await snapshots.take();
      continue;
    }
    if (answer === 'timeout') {
      route.statuses.timeout = (route.statuses.timeout ?? 0) + 1;
      finding('hang', `no answer within ${options.timeoutMs ?? 15_000} ms`);
      before = await snapshots.take();
      continue;
    }
    route.statuses[answer.status] = (route.statuses[answer.status] ?? 0) + 1;
    const after = await snapshots.take();
    if (answer.status >= 500) {
      finding('status_5xx', answer.text.slice(0, 500), answer.status);
    } else if (answer.status >= 400) {
      if (!isErrorBody(answer.json)) finding('error_shape', answer.text.slice(0, 500), answer.status);
      const allowed = allowedOnRefusal(fuzzCase.route, answer, request);
      const changed = Object.entries(changes(before, after)).filter(
        ([name]) => !allowed.has(name) || !/^\d+ → \d+$/.test(changes(before, after)[name]!) || deltaOf(before, after, name) !== 1,
      );
      if (changed.length > 0)
        finding('stored_on_refusal', `${answer.text.slice(0, 300)} changed ${JSON.stringify(Object.fromEntries(changed))}`, answer.status);
    } else if (answer.status < 200 || answer.status >= 300) {
      finding('unexpected_status', answer.text.slice(0, 300), answer.status);
    }
    const leftover = options.drainLog();
    if (leftover.length > 0 && answer.status >= 500) stats.findings.at(-1)!.log.push(...leftover);
    before = after;
  }
  return stats;
}

function deltaOf(before: Snapshot, after: Snapshot, name: string): number {
  return Number(after[name as keyof Snapshot]) - Number(before[name as keyof Snapshot]);
}

/** A stable identity for "the same bug": kind, route, status, code and the first frame of the stack. */
export function signatureOf(finding: Finding): string {
  const code = /"code":"([a-z_]+)"/.exec(finding.detail)?.[1] ?? '';
  const log = finding.log.join(' ⏎ ');
  // In-process lines read "METHOD url: Name: message ⏎ at …"; a spawned server logs JSON.
  const error = (/"message":"([^"]{0,100})/.exec(log)?.[1] ?? /: ((?:[A-Za-z]*Error|error)\b[^⏎]{0,100})/.exec(log)?.[1] ?? '')
    .replace(/[0-9a-f-]{36}|\d+/g, 'N')
    .trim();
  const frame = /\/(src\/[^):]+)/.exec(log)?.[1] ?? '';
  const changed =
    finding.kind === 'stored_on_refusal' ? (finding.detail.match(/changed \{(.*)\}/)?.[1] ?? '').replace(/"[^"]*→[^"]*"/g, '') : '';
  if (finding.kind === 'error_shape') {
    // Answers Tally did not write (Node's parser, via Fastify's default client-error
    // handler) are one finding per kind of wire damage, whatever the route.
    const wire = /wire:([a-z0-9.-]+)/.exec(finding.how)?.[1] ?? '';
    return [finding.kind, finding.status ?? '', finding.detail.slice(0, 100), wire].filter((p) => p !== '').join(' | ');
  }
  return [finding.kind, finding.route, finding.status ?? '', code, error, frame, changed].filter((p) => p !== '').join(' | ');
}

function sizeOf(request: FuzzRequest): number {
  return request.url.length + (request.body?.length ?? 0) + JSON.stringify(request.headers).length;
}

/** One example per distinct finding, the smallest request that showed it. */
export function distinctFindings(findings: Finding[]): { signature: string; count: number; example: Finding }[] {
  const groups = new Map<string, { signature: string; count: number; example: Finding }>();
  for (const finding of findings) {
    const signature = signatureOf(finding);
    const group = groups.get(signature);
    if (!group) groups.set(signature, { signature, count: 1, example: finding });
    else {
      group.count++;
      if (sizeOf(finding.request) < sizeOf(group.example.request)) group.example = finding;
    }
  }
  return [...groups.values()];
}

function abbreviate(text: string | Buffer | undefined, max = 400): string {
  if (text === undefined) return '(none)';
  const s = text.toString();
  return s.length <= max ? JSON.stringify(s) : `${JSON.stringify(s.slice(0, max))}… (${s.length} chars)`;
}

export function formatReport(title: string, stats: RunStats, seed: number, ms: number): string {
  const lines = [`${title}: ${stats.cases} cases, seed ${seed}, ${(ms / 1000).toFixed(1)} s`];
  for (const [route, { cases, statuses }] of Object.entries(stats.byRoute))
    lines.push(`  ${route}: ${cases} → ${JSON.stringify(statuses)}`);
  const distinct = distinctFindings(stats.findings);
  lines.push(`  findings: ${stats.findings.length} (${distinct.length} distinct)`);
  for (const { signature, count, example } of distinct) {
    const headers = Object.fromEntries(
      Object.entries(example.request.headers).map(([k, v]) => [
        k,
        typeof v === 'string' && v.length > 120 ? `${v.slice(0, 120)}… (${v.length})` : v,
      ]),
    );
    lines.push(
      `  ── ${signature} ×${count}`,
      `     ${example.request.method} ${abbreviate(example.request.url, 200)} (${example.how})`,
      `     headers ${JSON.stringify(headers)}`,
      `     body ${abbreviate(example.request.body)}`,
      `     answer ${example.status ?? ''} ${example.detail.slice(0, 400)}`,
      ...example.log.slice(0, 3).map((l) => `     log ${l.slice(0, 1500)}`),
    );
  }
  return lines.join('\n');
}

/** The distinct findings of these kinds, one line each with its count: [] when clean. */
export function findingsReport(stats: RunStats, kinds: readonly Finding['kind'][]): string[] {
  return distinctFindings(stats.findings.filter((f) => kinds.includes(f.kind))).map(({ signature, count }) => `${signature} ×${count}`);
}

/** The ledger invariants that fail after the run, by name: {} when the ledger is sound. */
export async function unsoundLedger(pool: Pool): Promise<Record<string, unknown[]>> {
  return Object.fromEntries(Object.entries(await ledgerViolations(pool)).filter(([, rows]) => rows.length > 0));
}
