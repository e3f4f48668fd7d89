import { expectedRefusalOf } from '../simulator/index.js';

/** How the summary names the refusals the simulator provokes (one, several); another code is named as it is. */
const ON_PURPOSE: Record<string, [string, string]> = {
  invalid_signature: ['forged signature', 'forged signatures'],
  event_key_conflict: ['conflict', 'conflicts'],
  event_mismatch: ['mismatch', 'mismatches'],
};

/**
 * The demo's server log. The simulator sends forged deliveries on purpose, and each
 * refusal is a WARN 'webhook refused' line: eighty of them read as eighty failures to
 * someone trying Tally for the first time. A line is held back and counted only when it
 * is exactly the refusal its delivery was sent to provoke (the code its x-request-id
 * names, see simulator/deliveries.ts); everything else — a genuine delivery refused, a
 * forged one refused for another reason, any other warning — is written as it came.
 */
export class DemoLog {
  private readonly provoked = new Map<string, number>();

  constructor(private readonly out: (line: string) => void = (line) => process.stdout.write(line)) {}

  /** pino's destination: one JSON line per call. */
  write(line: string): void {
    const code = provokedCode(line);
    if (code === null) this.out(line);
    else this.provoked.set(code, (this.provoked.get(code) ?? 0) + 1);
  }

  /** "refused on purpose: 83 forged signatures, 2 conflicts", or null when none were. */
  summary(): string | null {
    if (this.provoked.size === 0) return null;
    const parts = [...this.provoked].map(([code, n]) => `${n} ${ON_PURPOSE[code]?.[n === 1 ? 0 : 1] ?? code}`);
    return `refused on purpose: ${parts.join(', ')}`;
  }
}

/** The refusal's code when the line is the refusal its request asked for; null otherwise. */
function provokedCode(line: string): string | null {
  let entry: { msg?: unknown; code?: unknown; request_id?: unknown };
  try {
    entry = JSON.parse(line) as typeof entry;
  } catch {
    return null;
  }
  if (entry.msg !== 'webhook refused' || typeof entry.code !== 'string') return null;
  return expectedRefusalOf(entry.request_id) === entry.code ? entry.code : null;
}
