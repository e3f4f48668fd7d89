/**
 * The one HTTP call the worker makes: GET a provider's object for its usage. Runs
 * outside any transaction, bounded by a timeout. Error messages name the URL and the
 * status, never the headers: the request carries the provider's api_key.
 */
export class UsageFetchFailed extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'UsageFetchFailed';
  }
}

/** An object's JSON is small; anything bigger is not the object we asked for. */
const MAX_ANSWER_BYTES = 4 * 1024 * 1024;

export async function getJson(url: string, headers: Record<string, string>, timeoutMs: number): Promise<unknown> {
  const where = redactUrl(url);
  let response: Response;
  let text: string;
  try {
    // redirect 'error': the Authorization header is for this host only.
    response = await fetch(url, { method: 'GET', headers, redirect: 'error', signal: AbortSignal.timeout(timeoutMs) });
    text = await response.text();
  } catch (error) {
    throw new UsageFetchFailed(`GET ${where}: ${describe(error, timeoutMs)}`);
  }
  if (!response.ok) throw new UsageFetchFailed(`GET ${where} answered ${response.status}`);
  if (text.length > MAX_ANSWER_BYTES) throw new UsageFetchFailed(`GET ${where} answered more than ${MAX_ANSWER_BYTES} bytes`);
  try {
    return JSON.parse(text);
  } catch {
    throw new UsageFetchFailed(`GET ${where} answered ${response.status} with a body that is not JSON`);
  }
}

function describe(error: unknown, timeoutMs: number): string {
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) return `no answer within ${timeoutMs} ms`;
  const cause = error instanceof Error ? (error.cause as { code?: unknown } | undefined) : undefined;
  if (cause && typeof cause.code === 'string') return `network error ${cause.code}`;
  return 'network error';
}

/** The URL without query or credentials (neither is ever used; this only makes sure). */
function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
  } catch {
    return '(invalid URL)';
  }
}
