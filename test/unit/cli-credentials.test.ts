import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keptAdminToken } from '../../src/cli/admin-token.js';
import { bearerToken, NoAnswer, type Caller } from '../../src/cli/api-client.js';

/**
 * Issue 37.1: which credential an operator command sends. A credential given on purpose
 * (--token, TALLY_ADMIN_TOKEN, TALLY_API_KEY) always wins over the admin token `serve`
 * keeps in the data folder: after the quickstart, ./.tally/admin-token belongs to the
 * quickstart's server, and a command naming its own credential sent that one instead.
 * The kept file is a real one, made by serve's own keptAdminToken.
 */
let dataDir: string;
let kept: string;
beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'tally-credentials-'));
  kept = (await keptAdminToken(dataDir)).token;
});
afterAll(() => rm(dataDir, { recursive: true, force: true }));

const send = (caller: Caller, env: { adminToken?: string; apiKey?: string }, token?: string) =>
  bearerToken(caller, { token }, { dataDir, adminToken: env.adminToken, apiKey: env.apiKey });

describe('the credential an operator command sends', () => {
  it('--token wins over the environment and the kept file, for every caller', async () => {
    for (const caller of ['admin', 'tenant', 'either'] as const) {
      expect(await send(caller, { adminToken: 'env-admin', apiKey: 'env-key' }, 'flag')).toBe('flag');
    }
  });

  it("TALLY_ADMIN_TOKEN wins over the kept file (an admin's call, or one either may make)", async () => {
    expect(await send('admin', { adminToken: 'env-admin' })).toBe('env-admin');
    expect(await send('either', { adminToken: 'env-admin', apiKey: 'env-key' })).toBe('env-admin');
  });

  it('TALLY_API_KEY wins over the kept file for a call a tenant may make (tally statement, wallets show)', async () => {
    expect(await send('either', { apiKey: 'env-key' })).toBe('env-key');
    expect(await send('tenant', { apiKey: 'env-key' })).toBe('env-key');
  });

  it("the kept file is the last resort, and never a tenant's credential", async () => {
    expect(await send('either', {})).toBe(kept);
    // An API key is no admin credential: an admin's call falls back to the kept token.
    expect(await send('admin', { apiKey: 'env-key' })).toBe(kept);
    await expect(send('tenant', {})).rejects.toBeInstanceOf(NoAnswer);
  });

  it('with nothing given and nothing kept, no call is made', async () => {
    const empty = await mkdtemp(join(tmpdir(), 'tally-credentials-none-'));
    try {
      await expect(bearerToken('admin', {}, { dataDir: empty, adminToken: undefined, apiKey: undefined })).rejects.toThrow(/no admin token/);
    } finally {
      await rm(empty, { recursive: true, force: true });
    }
  });
});
