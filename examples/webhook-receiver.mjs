#!/usr/bin/env node
// A receiver for Tally's outbound webhooks (docs/outbound-webhooks.md), with nothing but
// node:http and the standardwebhooks package:
//
//   WEBHOOK_SECRET=whsec_... PORT=4000 node examples/webhook-receiver.mjs
//
// It verifies each request on its raw body, drops duplicates by webhook-id, answers 204 at
// once and does the work afterwards. WEBHOOK_SECRET may list several secrets,
// space-separated, while you switch to a rotated one.
import http from 'node:http';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';

const secrets = (process.env.WEBHOOK_SECRET ?? '').split(/\s+/).filter(Boolean);
if (secrets.length === 0) {
  console.error('set WEBHOOK_SECRET to the whsec_... secret POST /v1/webhook-endpoints answered');
  process.exit(2);
}
const verifiers = secrets.map((secret) => new Webhook(secret));
const port = Number(process.env.PORT ?? 4000);
const MAX_BODY_BYTES = 1024 * 1024;

// Tally delivers at least once: the same webhook-id can arrive again (a retry after a
// timeout, a replay). Remember the ids already handled. In production keep them where
// the work is recorded — e.g. a table with the id as its primary key, inserted in the
// same transaction as the work — rather than in memory.
const seen = new Set();
const work = [];

/** The message, if one of our secrets signed it (and its timestamp is within 5 minutes); else null. */
function verified(body, headers) {
  for (const webhook of verifiers) {
    try {
      return webhook.verify(body, headers);
    } catch (error) {
      if (!(error instanceof WebhookVerificationError)) throw error;
    }
  }
  return null;
}

const server = http.createServer((req, res) => {
  const chunks = [];
  let size = 0;
  req.on('data', (chunk) => {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) req.destroy();
    else chunks.push(chunk);
  });
  req.on('end', () => {
    // Verify the raw bytes as they arrived: re-serialised JSON would not match the signature.
    const body = Buffer.concat(chunks).toString('utf8');
    const message = verified(body, req.headers);
    if (!message) {
      res.writeHead(401).end();
      return;
    }
    const id = req.headers['webhook-id'];
    // Answer fast (Tally waits 10 s at most, then retries): queue the work, reply 2xx.
    res.writeHead(204).end();
    if (seen.has(id)) return;
    seen.add(id);
    work.push({ id, message });
    setImmediate(drain);
  });
});

/** The slow part, after the answer: update your records, notify your user, … */
function drain() {
  for (let item = work.shift(); item; item = work.shift()) {
    const { id, message } = item;
    console.log(`received ${message.type} ${id} ${JSON.stringify(message.data)}`);
  }
}

server.listen(port, () => console.log(`listening on http://127.0.0.1:${port}`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
