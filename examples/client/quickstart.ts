/**
 * README's quickstart from TypeScript: a typed client of Tally's HTTP API. The types in
 * tally-api.d.ts are generated from GET /openapi.json by openapi-typescript; openapi-fetch
 * makes the calls with them, so a wrong path, a missing field or one of the wrong type is a
 * compile error, and every answer is typed. It creates a tenant, opens its wallet and
 * credits it 10.00 USD, registers a provider and prices a model, submits a job, reports it
 * completed with a webhook signed as a provider signs it (Standard Webhooks), and waits
 * until the job is captured: 1200 × 3.00 / 10⁶ + 340 × 15.00 / 10⁶ = 0.008700 billed.
 *
 * Against the server `npm start` runs (its admin token is in .tally/admin-token):
 *
 *   npx tsc -p examples/client
 *   TALLY_URL=http://127.0.0.1:8080 TALLY_ADMIN_TOKEN=$(cat .tally/admin-token) node dist/examples/client/quickstart.js
 *
 * test/e2e/openapi-document.test.ts regenerates the types from the live document (the
 * file must not differ), compiles this file and runs it against a fresh server.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import createClient from 'openapi-fetch';
import { Webhook } from 'standardwebhooks';
import type { components, paths } from './tally-api.js';

type ApiError = components['schemas']['Error'];
type GenericWebhook = Extract<
  paths['/v1/webhooks/{provider}']['post']['requestBody']['content']['application/json'],
  { type: string; data: unknown }
>;

const baseUrl = process.env.TALLY_URL ?? 'http://127.0.0.1:8080';
const adminToken = process.env.TALLY_ADMIN_TOKEN;
if (!adminToken) throw new Error('set TALLY_ADMIN_TOKEN to the admin token `npm start` printed (kept in .tally/admin-token)');

/** The answer's body, or an Error naming the status and Tally's error code and message. */
function ok<T>(answer: { data?: T; error?: ApiError | unknown; response: Response }): T {
  if (answer.data !== undefined) return answer.data;
  const error = (answer.error as ApiError | undefined)?.error;
  throw new Error(
    `${answer.response.url} answered ${answer.response.status}: ${error ? `${error.code}: ${error.message}` : String(answer.error)}`,
  );
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const operator = createClient<paths>({ baseUrl, headers: bearer(adminToken) });
// Names of their own, so the example runs again on the same server.
const suffix = randomBytes(4).toString('hex');

// As the operator: a tenant, whose API key is shown only in this answer.
const tenant = ok(await operator.POST('/v1/tenants', { body: { name: `acme-${suffix}` } }));
const asTenant = createClient<paths>({ baseUrl, headers: bearer(tenant.api_key) });

// As the tenant: its USD wallet. As the operator: 10.00 credited, once per Idempotency-Key.
const wallet = ok(await asTenant.POST('/v1/wallets', { body: { currency: 'USD' } }));
const credit = { params: { path: { id: wallet.id }, header: { 'idempotency-key': randomUUID() } }, body: { amount: '10.00' } };
ok(await operator.POST('/v1/wallets/{id}/credits', credit));
console.log(`wallet ${wallet.id} of tenant ${tenant.id}: credited 10.00 USD`);

// A provider of the generic kind, with its webhook signing secret, and the model's price
// per 1,000,000 units of each dimension.
const secret = `whsec_${randomBytes(24).toString('base64')}`;
const provider = ok(await operator.POST('/v1/providers', { body: { name: `demo-gpu-${suffix}`, kind: 'generic', secrets: [secret] } }));
const model = 'llama-3.1-8b';
const unitPrices = { input_tokens: '3.00', output_tokens: '15.00' };
ok(await operator.PUT('/v1/prices/{model}', { params: { path: { model } }, body: { currency: 'USD', unit_prices: unitPrices } }));

// As the tenant: a job, which reserves the price of its limits.
const submitted = ok(
  await asTenant.POST('/v1/jobs', {
    params: { header: { 'idempotency-key': randomUUID() } },
    body: { wallet_id: wallet.id, model, provider: provider.name, limits: { input_tokens: 10_000, output_tokens: 2_000 } },
  }),
);
console.log(`job ${submitted.id}: ${submitted.state}, ${submitted.reserved} reserved`);

// As the provider: the job completed, with its usage. The signature is over the exact
// bytes sent, so the body is serialised once, signed, and sent as it is.
const completed: GenericWebhook = {
  type: 'job.completed',
  data: { job_id: submitted.id, usage: { input_tokens: 1200, output_tokens: 340 } },
};
const raw = JSON.stringify(completed);
const messageId = `msg_${randomUUID()}`;
const sentAt = new Date();
const accepted = ok(
  await createClient<paths>({ baseUrl }).POST('/v1/webhooks/{provider}', {
    params: { path: { provider: provider.name } },
    body: completed,
    bodySerializer: () => raw,
    headers: {
      'content-type': 'application/json',
      'webhook-id': messageId,
      'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
      'webhook-signature': new Webhook(secret).sign(messageId, sentAt, raw),
    },
  }),
);
console.log(`webhook ${messageId}: ${accepted.status}`);

// Accepted is not yet settled: a worker settles the event a moment later.
const deadline = Date.now() + 30_000;
let job = ok(await asTenant.GET('/v1/jobs/{id}', { params: { path: { id: submitted.id } } }));
while (job.state !== 'captured') {
  if (Date.now() > deadline)
    throw new Error(`job ${job.id} is still ${job.state} after 30 s: is a worker running (tally serve --workers 1 or more)?`);
  await new Promise((resolve) => setTimeout(resolve, 100));
  job = ok(await asTenant.GET('/v1/jobs/{id}', { params: { path: { id: submitted.id } } }));
}
console.log(`job ${job.id}: captured ${job.captured}, released ${job.released}`);

const balance = ok(await asTenant.GET('/v1/wallets/{id}', { params: { path: { id: wallet.id } } }));
console.log(`balance ${balance.balance} ${balance.currency}`);
