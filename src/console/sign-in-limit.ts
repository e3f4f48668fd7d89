/**
 * Failed sign-ins per client address in a sliding minute: past the limit, every sign-in
 * from that address (even with the right credential) is refused until the oldest failure
 * leaves the window. Only failures count, so an operator or a test suite that signs in
 * often is never locked out, while guessing an admin token stays at 10 tries a minute.
 *
 * Hand-written rather than @fastify/rate-limit: that plugin counts every request of a
 * route, successful or not, and has no way to count only the ones that failed. In this
 * process's memory, like the plugin's default store: several `serve` processes each allow
 * the limit. The address is the socket's (trustProxy is off): behind a proxy every browser
 * shares the proxy's, so the limit is then the whole console's, erring on guessing less.
 */
export const FAILED_SIGN_INS_PER_MINUTE = 10;
const WINDOW_MS = 60_000;
/** Addresses remembered at most; past it the longest-idle is forgotten (memory stays bounded under a flood). */
const MAX_ADDRESSES = 10_000;

export class SignInLimiter {
  private readonly failures = new Map<string, number[]>();

  constructor(
    private readonly limit = FAILED_SIGN_INS_PER_MINUTE,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Seconds until this address may try again; 0 when it may now. */
  retryAfterSeconds(address: string): number {
    const recent = this.recent(address);
    if (recent.length < this.limit) return 0;
    return Math.max(1, Math.ceil((recent[recent.length - this.limit]! + WINDOW_MS - this.now()) / 1000));
  }

  recordFailure(address: string): void {
    const recent = this.recent(address);
    recent.push(this.now());
    this.failures.delete(address); // re-inserted last: the Map's order is least recently failed first
    this.failures.set(address, recent);
    if (this.failures.size > MAX_ADDRESSES) this.failures.delete(this.failures.keys().next().value!);
  }

  private recent(address: string): number[] {
    const since = this.now() - WINDOW_MS;
    const kept = (this.failures.get(address) ?? []).filter((at) => at > since);
    if (kept.length === 0) this.failures.delete(address);
    else this.failures.set(address, kept);
    return kept;
  }
}
