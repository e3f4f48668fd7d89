/** The local Stripe (tests and `tally demo`): its server and a sender of signed events. */
export { LocalStripe, type CardBehaviour, type LocalStripeOptions, type RequestRecord } from './local-stripe.js';
export { sendStripeEvent, stripeEvent, stripeSignature, type StripeEvent } from './events.js';
