import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Client, TEST_SECRET, deliver, signDelivery } from '../support/client.js';
import { freshDatabase } from '../support/database.js';
import { FakeProviderApi } from '../support/fake-provider-api.js';
import { refuseCapturesOnDemand } from '../support/refused-captures.js';
import { startServer, waitUntil } from '../support/server.js';

/**
 * Found by the whole-service simulation (seed 1, 300 steps: `npm run sim -- --seed 1
 * --steps 300`): a named provider's completion moves its job to `usage_pending` while
 * the usage is fetched; when that event is then dead-lettered and discarded, the fetch
 * it started will never finish, yet the job stayed `usage_pending` for good — shown as
 * fetching, and passed by the cancel grace. Discarding it now puts the job back where
 * the fetch found it (as a fetched mismatch does), in the discard's statement.
 */
const db = await freshDatabase();
const api = await FakeProviderApi.start();
const server = await startServer(db.url, { workers: 1, env: { TALLY_MAX_ATTEMPTS: '1', TALLY_POLL_INTERVAL_MS: '100' } });
const admin = new Client(server.url);
const refusals = await refuseCapturesOnDemand(db.pool);
const OPENAI_KEY = `sk-e2e-${randomUUID()}`;
const fixture = (name: string) => JSON.parse(readFileSync(new URL(`../fixtures/providers/${name}`, import.meta.url), 'utf8'));

async function openAiJob(cancelFirst: boolean) {
  const suffix = randomUUID().slice(0, 8);
  const provider = `openai-${suffix}`;
  const model = `gpt-${suffix}`;
  expect(
    (await admin.post('/v1/providers', { name: provider, kind: 'openai', secrets: [TEST_SECRET], api_key: OPENAI_KEY, base_url: api.url }))
      .status,
  ).toBe(201);
  await admin.request('PUT', `/v1/prices/${model}`, { currency: 'USD', unit_prices: { input_tokens: '1.00', output_tokens: '2.00' } });
  const tenant = await admin.post('/v1/tenants', { name: `tenant-${suffix}` });
  const client = admin.as(tenant.body.api_key);
  const wallet = (await client.post('/v1/wallets', { currency: 'USD' })).body;
  await admin.post(`/v1/wallets/${wallet.id}/credits`, { amount: '10.00' }, { 'idempotency-key': randomUUID() });
  const ref = `resp_${suffix}`;
  const job = await client.post(
    '/v1/jobs',
    { wallet_id: wallet.id, model, provider, provider_job_ref: ref, limits: { input_tokens: 10_000, output_tokens: 5_000 } },
    { 'idempotency-key': randomUUID() },
  );
  expect(job.status).toBe(201);
  if (cancelFirst) expect((await client.post(`/v1/jobs/${job.body.id}/cancel`, {})).status).toBe(202);
  api.script(`/v1/responses/${ref}`, { status: 200, body: { ...fixture('openai-response-object-completed.json'), id: ref, model } });
  await refusals.refuse(job.body.id);
  const eventKey = `msg_${suffix}`;
  const event = { ...fixture('openai-webhook-response.completed.json'), id: `evt_${suffix}`, data: { id: ref } };
  expect((await deliver(server.url, provider, signDelivery(event, { id: eventKey }))).status).toBe(200);
  const view = async () => (await admin.get(`/v1/jobs/${job.body.id}`)).body;
  await waitUntil(async () => (await view()).events?.[0]?.state === 'dead');
  // the capture was refused after the fetch: the job is still where the fetch put it
  expect((await view()).state).toBe('usage_pending');
  return { provider, eventKey, view };
}

describe('discarding the dead completion of a job whose usage was being fetched', () => {
  it('puts the job back where the fetch found it: reserved, with its hold', async () => {
    const { provider, eventKey, view } = await openAiJob(false);
    const discard = await admin.post(`/v1/events/${provider}/${eventKey}/discard`, { note: 'refused for good' });
    expect(discard.status).toBe(200);
    expect(await view()).toMatchObject({ state: 'reserved', reserved: '0.020000', captured: '0.000000', settlements: [] });
  });

  it('or to cancel_requested when the tenant had asked to cancel, so the cancel grace can release it', async () => {
    const { provider, eventKey, view } = await openAiJob(true);
    expect((await admin.post(`/v1/events/${provider}/${eventKey}/discard`, { note: 'refused for good' })).status).toBe(200);
    expect((await view()).state).toBe('cancel_requested');
    // a second discard answers the first's record and moves nothing
    expect((await admin.post(`/v1/events/${provider}/${eventKey}/discard`, { note: 'again' })).body.discard_note).toBe('refused for good');
    expect((await view()).state).toBe('cancel_requested');
  });
});
