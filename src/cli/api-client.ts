import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { Command } from 'commander';
import { readKeptAdminToken } from './admin-token.js';
import { processConfig, type Config } from '../config/index.js';

/**
 * The operator commands' one way to a running server: over its HTTP API, like any
 * client, never to the database behind it. They answer what the API answers: the JSON
 * (pretty), or one field of it, or the error's code and message with a non-zero exit.
 */

/** Where `serve` listens by default (serve-banner.ts names another URL when it differs). */
export const DEFAULT_URL = 'http://127.0.0.1:8080';

/** Exit codes: the server refused (its error is printed), or no answer came at all. */
export const EXIT_REFUSED = 1;
export const EXIT_NO_ANSWER = 2;

/** Who a command acts as; it decides which credential is used when --token is not given. */
export type Caller = 'admin' | 'tenant' | 'either';

export interface ApiOptions {
  url?: string;
  token?: string;
  field?: string;
}

/** The command did not get what it asked for (exit 1), with a stable code like the API's. */
export class CommandFailed extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'CommandFailed';
  }
}

/** The server answered with an error: {error: {code, message, param?}}. */
export class ApiRefused extends CommandFailed {
  constructor(
    readonly status: number,
    code: string,
    message: string,
    readonly param?: string,
  ) {
    super(code, message);
    this.name = 'ApiRefused';
  }
}

/** No answer came (server down, wrong URL, no credential): nothing is known to have happened. */
export class NoAnswer extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NoAnswer';
  }
}

export function apiUrl(options: ApiOptions, config: Pick<Config, 'url' | 'port'> = processConfig()): string {
  const url = options.url || config.url || `http://127.0.0.1:${config.port}`;
  return url.replace(/\/+$/, '');
}

/**
 * The credential of a call. One given on purpose — --token, else the environment
 * (TALLY_API_KEY for a tenant's call; TALLY_ADMIN_TOKEN, and for a call either may make
 * TALLY_API_KEY) — always wins over the token `serve` keeps in the data folder: that file
 * belongs to whichever embedded setup last ran from this folder (the quickstart's, say),
 * and a script or test that names its credential must not be sent as someone else.
 */
export async function bearerToken(
  caller: Caller,
  options: ApiOptions,
  config: Pick<Config, 'apiKey' | 'adminToken' | 'dataDir'> = processConfig(),
): Promise<string> {
  if (options.token) return options.token;
  if (caller === 'tenant') {
    if (config.apiKey) return config.apiKey;
    throw new NoAnswer("this is a tenant's call: give the tenant's api_key (from `tally tenants create`) with --token or TALLY_API_KEY");
  }
  if (config.adminToken) return config.adminToken;
  if (caller === 'either' && config.apiKey) return config.apiKey;
  const kept = await readKeptAdminToken(resolve(config.dataDir));
  if (kept) return kept;
  throw new NoAnswer(
    'no admin token: give --token or TALLY_ADMIN_TOKEN (on the embedded database, `tally serve` keeps one in $TALLY_DATA_DIR/admin-token, which is read when TALLY_DATA_DIR is the same)',
  );
}

export interface Call {
  caller: Caller;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  body?: unknown;
  idempotencyKey?: string;
  /** an Accept header (e.g. text/csv): a 2xx answer that is not JSON comes back as its text */
  accept?: string;
}

/** One call; resolves with the 2xx answer's JSON, rejects with ApiRefused or NoAnswer. */
export async function callApi(options: ApiOptions, call: Call): Promise<unknown> {
  const url = `${apiUrl(options)}${call.path}`;
  const headers: Record<string, string> = { authorization: `Bearer ${await bearerToken(call.caller, options)}` };
  if (call.body !== undefined) headers['content-type'] = 'application/json';
  if (call.idempotencyKey !== undefined) headers['idempotency-key'] = call.idempotencyKey;
  if (call.accept !== undefined) headers.accept = call.accept;
  let response: Response;
  try {
    response = await fetch(url, { method: call.method, headers, body: call.body === undefined ? undefined : JSON.stringify(call.body) });
  } catch (error) {
    const retry = call.idempotencyKey ? `; if it may have arrived, retry with --idempotency-key ${call.idempotencyKey}: it applies at most once` : '';
    throw new NoAnswer(`no answer from ${url} (${causeOf(error)}): is \`tally serve\` running there? (--url or TALLY_URL)${retry}`);
  }
  return answerOf(response);
}

/** The JSON of a 2xx answer; an error answer becomes ApiRefused with its code and message. */
export async function answerOf(response: Response): Promise<unknown> {
  const text = await response.text();
  let body: unknown = text;
  try {
    body = text === '' ? null : JSON.parse(text);
  } catch {
    // not JSON: reported as text below
  }
  if (response.ok) return body;
  const error = (body as { error?: { code?: unknown; message?: unknown; param?: unknown } } | null)?.error;
  if (error && typeof error.code === 'string') {
    throw new ApiRefused(response.status, error.code, String(error.message ?? ''), typeof error.param === 'string' ? error.param : undefined);
  }
  throw new ApiRefused(response.status, 'unexpected_answer', text.slice(0, 500));
}

function causeOf(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error as Error).message;
}

/** The value at a dotted path (`id`, `settlements.0.amount`), or undefined. */
export function fieldOf(answer: unknown, path: string): unknown {
  let value: unknown = answer;
  for (const part of path.split('.')) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

/** The whole answer as pretty JSON, or one field: a string bare (for `$(...)`), anything else as JSON. */
export function printAnswer(answer: unknown, field?: string): void {
  if (field === undefined) {
    console.log(JSON.stringify(answer, null, 2));
    return;
  }
  const value = fieldOf(answer, field);
  if (value === undefined) throw new CommandFailed('no_such_field', `the answer has no field ${field}: ${JSON.stringify(answer)}`);
  console.log(typeof value === 'string' ? value : JSON.stringify(value));
}

/** Prints what went wrong as one line on stderr and sets the exit code. */
export function reportCallError(command: string, error: unknown): void {
  if (error instanceof CommandFailed) {
    const status = error instanceof ApiRefused ? `${error.status} ` : '';
    const param = error instanceof ApiRefused && error.param ? ` (param: ${error.param})` : '';
    console.error(`tally ${command}: ${status}${error.code}: ${error.message}${param}`);
    process.exitCode = EXIT_REFUSED;
  } else if (error instanceof NoAnswer) {
    console.error(`tally ${command}: ${error.message}`);
    process.exitCode = EXIT_NO_ANSWER;
  } else {
    throw error;
  }
}

/** Adds --url, --token and --field to a command that calls the API. */
export function withApiOptions(command: Command, caller: Caller): Command {
  const who =
    caller === 'tenant'
      ? "the tenant's api_key (default $TALLY_API_KEY)"
      : `the admin token (default $TALLY_ADMIN_TOKEN${caller === 'either' ? ', else $TALLY_API_KEY' : ''}, else $TALLY_DATA_DIR/admin-token)`;
  return command
    .option('--url <url>', `the API (default $TALLY_URL, else http://127.0.0.1:$PORT, PORT default 8080)`)
    .option('--token <token>', `bearer credential: ${who}`)
    .option('--field <path>', 'print only this field of the answer (e.g. id, api_key, balance, settlements.0.amount)');
}

/** A fresh Idempotency-Key for a call that requires one and was given none. */
export function newIdempotencyKey(): string {
  return `cli_${randomUUID()}`;
}

/**
 * The action of an API command: runs the call, prints the answer, reports a refusal.
 * `run` gets the command's arguments and options as commander hands them over.
 */
export function apiAction<A extends unknown[]>(name: string, run: (...args: A) => Promise<unknown>) {
  return async (...args: A): Promise<void> => {
    const options = args.at(-2) as ApiOptions;
    try {
      printAnswer(await run(...args), options.field);
    } catch (error) {
      reportCallError(name, error);
    }
  };
}
