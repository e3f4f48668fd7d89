import { createHmac } from 'node:crypto';
import Stripe from 'stripe';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseStripeSignature, rebuiltStripeSignature } from '../../src/intake/stripe-signature.js';
import { stripeEventRefusal } from '../../src/funds/payments/event-refusal.js';

/**
 * Issue 33, item 8: Tally's reading of Stripe-Signature is Stripe's SDK's own. The SDK
 * signs over `${its timestamp}.${payload}`, so a signature made over the timestamp Tally
 * read verifies under the SDK (tolerance 0: no clock) exactly when both readings agree —
 * checked on the raw header, as the SDK reads it, not on the rebuilt one.
 */
const SECRET = 'whsec_dGFsbHktc2lnbmF0dXJlLXBhcnNl';
const PAYLOAD = '{"id":"evt_1","object":"event"}';
const sdk = new Stripe('sk_test_parse_only', { telemetry: false });

const signedOver = (timestamp: number) => createHmac('sha256', SECRET).update(`${timestamp}.${PAYLOAD}`).digest('hex');

/** Whether the SDK, on the raw header plus a v1 over `timestamp`, verifies it (so signs over that timestamp). */
function sdkSignsOver(header: string, timestamp: number): boolean {
  try {
    return sdk.webhooks.signature!.verifyHeader(PAYLOAD, `${header},v1=${signedOver(timestamp)}`, SECRET, 0);
  } catch {
    return false;
  }
}

describe("Stripe-Signature, read as Stripe's SDK reads it", () => {
  const headers = [
    't=100,t=200',
    't=200,t=100',
    't=1700000000,t=9999999999',
    'v1=00,t=5,v0=abc',
    't=7, t=8', // ' t' is not `t`: the SDK ignores it, so 7
    't=12abc',
    't=0x10',
    'x=1,t=7,t=8,t=9',
    't=3=4',
  ];

  it.each(headers)('%s: the timestamp Tally checks is the one the SDK signs over', (header) => {
    const parsed = parseStripeSignature(header)!;
    expect(sdkSignsOver(header, parsed.timestamp)).toBe(true);
    // and the header handed to the SDK is read the same way again
    expect(parseStripeSignature(rebuiltStripeSignature({ ...parsed, signatures: [] }))!.timestamp).toBe(parsed.timestamp);
  });

  it('the last of several t= counts (a first-t reading would check another instant than the one signed)', () => {
    const header = 't=1700000000,t=4102444800';
    expect(parseStripeSignature(header)!.timestamp).toBe(4102444800);
    expect(sdkSignsOver(header, 1700000000)).toBe(false);
  });

  it('agrees with the SDK on any list of t= items', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 2 ** 40 }), { minLength: 1, maxLength: 5 }), (stamps) => {
        const header = stamps.map((t) => `t=${t}`).join(',');
        const parsed = parseStripeSignature(header)!;
        expect(parsed.timestamp).toBe(stamps.at(-1));
        expect(sdkSignsOver(header, parsed.timestamp)).toBe(true);
      }),
      { numRuns: 50 },
    );
  });

  it('keeps every v1 signature and reads no timestamp from a header without t=', () => {
    expect(parseStripeSignature('t=5,v1=aa,v0=bb,v1=cc')).toEqual({ timestamp: 5, signatures: ['aa', 'cc'] });
    expect(rebuiltStripeSignature({ timestamp: 5, signatures: ['aa', 'cc'] })).toBe('t=5,v1=aa,v1=cc');
    expect(parseStripeSignature('v1=aa')).toBeNull();
  });
});

describe('stripeEventRefusal (issue 33, item 7)', () => {
  const test = { livemode: false, account: null };
  it("refuses another account's event (Connect), any account's when none is configured, and the other mode", () => {
    expect(stripeEventRefusal({ livemode: false }, test)).toBeNull();
    expect(stripeEventRefusal({ livemode: false, account: null }, test)).toBeNull();
    expect(stripeEventRefusal({ livemode: false, account: 'acct_1Victim' }, test)).toBe('connect_account_refused');
    expect(stripeEventRefusal({ livemode: false, account: 42 }, test)).toBe('connect_account_refused');
    expect(stripeEventRefusal({ livemode: true, account: 'acct_other' }, test)).toBe('connect_account_refused');
    expect(stripeEventRefusal({ livemode: true }, test)).toBe('livemode_mismatch');
    const mine = { livemode: false, account: 'acct_mine' };
    expect(stripeEventRefusal({ livemode: false, account: 'acct_mine' }, mine)).toBeNull();
    expect(stripeEventRefusal({ livemode: false }, mine)).toBeNull();
    expect(stripeEventRefusal({ livemode: false, account: 'acct_other' }, mine)).toBe('connect_account_refused');
  });
});
