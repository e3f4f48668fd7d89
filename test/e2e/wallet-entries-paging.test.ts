import { describe, expect, it } from 'vitest';
import { freshDatabase } from '../support/database.js';
import { startServer } from '../support/server.js';
import { Client } from '../support/client.js';
import { createWorld } from '../support/world.js';

const db = await freshDatabase();
const server = await startServer(db.url, { workers: 0 });
const admin = new Client(server.url);

describe('GET /v1/wallets/{id}/entries pages', () => {
  it('20 entries by default, at most 100 on request, the cursor walks every entry once; other limits are 400', async () => {
    const world = await createWorld(admin, { credit: '0' });
    const credits = 101;
    for (let i = 0; i < credits; i++) {
      const answer = await admin.post(`/v1/wallets/${world.walletId}/credits`, { amount: '0.01' }, { 'idempotency-key': `page-${i}` });
      expect(answer.status).toBe(201);
    }
    const entries = (query: string) => world.tenant.get(`/v1/wallets/${world.walletId}/entries${query}`);

    const first = await entries('');
    expect(first.status).toBe(200);
    expect(first.body.data).toHaveLength(20);
    expect(first.body).toMatchObject({ has_more: true, next_cursor: first.body.data[19].id });

    const full = await entries('?limit=100');
    expect(full.body.data).toHaveLength(100);
    const rest = await entries(`?limit=100&cursor=${full.body.next_cursor}`);
    expect(rest.body).toMatchObject({ has_more: false, next_cursor: null });
    const ids = [...full.body.data, ...rest.body.data].map((e: { id: string }) => e.id);
    expect(new Set(ids).size).toBe(credits);
    expect(ids.slice(0, 20)).toEqual(first.body.data.map((e: { id: string }) => e.id));

    for (const limit of ['0', '101', '1000', '-1', 'ten']) {
      const refused = await entries(`?limit=${limit}`);
      expect(refused.status, `limit=${limit}`).toBe(400);
      expect(refused.body.error.code).toBe('invalid_request');
    }
  });
});
