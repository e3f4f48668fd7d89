/**
 * The Stripe-Signature header (`t=…,v1=…[,v1=…]`) read exactly as Stripe's SDK reads it
 * (`parseHeader` in node_modules/stripe/esm/Webhooks.js, not exported): items split on
 * ',', each split on '='; an item named exactly `t` sets the timestamp with
 * parseInt(value, 10), so of several `t=` the LAST one counts; each item named exactly
 * `v1` adds a signature; anything else is ignored. The SDK then checks a signature over
 * `${timestamp}.${payload}` and only that the timestamp is not too old.
 *
 * Tally also refuses a timestamp too far in the future, so it must look at the very `t`
 * the SDK verifies: a first-`t` reading of `t=<far future>,t=<now>,v1=<sig over now>` let
 * a captured signature carry any future instant past the check (issue 33, item 8).
 * Mirroring the parse is not left to trust: stripe-receive.ts hands the SDK the header
 * rebuilt from this reading (one `t`, the `v1` signatures), so the timestamp checked here
 * is by construction the one the SDK signs over, whatever a later SDK's parse does with
 * a doubled item; test/unit/stripe-signature.test.ts holds this reading against the
 * SDK's own on the raw headers.
 */
export interface StripeSignatureHeader {
  /** unix seconds; NaN when the value is not a number, as the SDK's parseInt gives it */
  timestamp: number;
  signatures: string[];
}

/** null without any `t` item (the SDK: "Unable to extract timestamp and signatures from header"). */
export function parseStripeSignature(header: string): StripeSignatureHeader | null {
  let timestamp: number | null = null;
  const signatures: string[] = [];
  for (const item of header.split(',')) {
    const [name, value] = item.split('=');
    if (name === 't') timestamp = parseInt(value!, 10);
    if (name === 'v1' && value !== undefined) signatures.push(value);
  }
  return timestamp === null ? null : { timestamp, signatures };
}

/** The header the SDK is given: the one timestamp read above, then every v1 signature. */
export function rebuiltStripeSignature(parsed: StripeSignatureHeader): string {
  return [`t=${parsed.timestamp}`, ...parsed.signatures.map((signature) => `v1=${signature}`)].join(',');
}
