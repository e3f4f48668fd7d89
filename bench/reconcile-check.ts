import { spawn } from 'node:child_process';

/**
 * `tally reconcile --json` on a database, as an operator runs it, as one verification:
 * ok when it exits 0 (clean), with the exception classes it found, or what it printed.
 * The bench's and the failover drill's; `tallyBin` is the caller's (each is compiled to
 * its own place in dist/).
 */
export async function reconcileCheck(tallyBin: string, databaseUrl: string): Promise<{ name: string; ok: boolean; detail: string }> {
  const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve) => {
    const child = spawn(process.execPath, [tallyBin, 'reconcile', '--json'], {
      env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let text = '';
    child.stdout!.on('data', (chunk: Buffer) => (text += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (text += chunk.toString()));
    child.on('close', (exitCode) => resolve({ code: exitCode, output: text }));
  });
  let detail = output.trim().slice(0, 300);
  try {
    const run = JSON.parse(output) as { clean: boolean; exceptions: { class: string }[] };
    detail = run.clean ? 'clean' : `${run.exceptions.length} exception(s): ${[...new Set(run.exceptions.map((e) => e.class))].join(', ')}`;
  } catch {
    // not JSON: show what it printed
  }
  return { name: '`tally reconcile` is clean', ok: code === 0, detail };
}
