import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Where Tally may send webhooks. A tenant names the URL, but the request leaves from the
 * operator's network: without a policy, a tenant could make Tally POST to the cloud's
 * metadata service, the database, or anything else on the private network (SSRF).
 *
 * Public unicast addresses only, by default: loopback, private (RFC 1918, IPv6 unique
 * local), link-local, carrier-grade NAT, multicast, unspecified, broadcast, reserved and
 * documentation ranges, and IPv6 forms that embed IPv4 (mapped, compatible, 6to4, Teredo, NAT64) are
 * refused — ipaddr.js classifies the ranges. The operator may allow more with
 * TALLY_OUTBOUND_ALLOW and refuse more with TALLY_OUTBOUND_DENY (comma-separated host
 * names, `.example.com` for a domain and its subdomains, IP addresses or CIDRs); the deny
 * list always wins.
 *
 * Checked twice: when an endpoint is registered (its URL, and the addresses its host
 * resolves to then), and at every delivery on the address actually connected to —
 * `guardedLookup` validates what DNS answers and hands the connection exactly that
 * address, so a host re-pointed at a private address after the check (DNS rebinding)
 * is refused.
 */

type Address = ipaddr.IPv4 | ipaddr.IPv6;
type Rule = { kind: 'host'; host: string; subdomains: boolean } | { kind: 'cidr'; range: [Address, number] };

export interface DestinationPolicy {
  readonly allow: readonly Rule[];
  readonly deny: readonly Rule[];
}

/** A destination the policy refuses; its message says why, for the attempt log and the API. */
export class DestinationRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DestinationRefused';
  }
}

/** A URL that cannot be a webhook destination at all, whatever the policy (scheme, credentials, form). */
export class InvalidDestinationUrl extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidDestinationUrl';
  }
}

/** The operator's policy from TALLY_OUTBOUND_ALLOW and TALLY_OUTBOUND_DENY; an entry that is no host, address or CIDR stops the process. */
export function destinationPolicy(env: { TALLY_OUTBOUND_ALLOW?: string | undefined; TALLY_OUTBOUND_DENY?: string | undefined }): DestinationPolicy {
  return {
    allow: parseRules('TALLY_OUTBOUND_ALLOW', env.TALLY_OUTBOUND_ALLOW),
    deny: parseRules('TALLY_OUTBOUND_DENY', env.TALLY_OUTBOUND_DENY),
  };
}

function parseRules(name: string, value: string | undefined): Rule[] {
  return (value ?? '')
    .split(',')
    .map((entry) => entry.trim().toLowerCase())
    .filter((entry) => entry !== '')
    .map((entry) => parseRule(name, entry));
}

function parseRule(name: string, entry: string): Rule {
  const bare = entry.replace(/^\[(.*)\]$/, '$1');
  if (ipaddr.isValid(bare)) {
    const address = ipaddr.process(bare);
    return { kind: 'cidr', range: [address, address.kind() === 'ipv4' ? 32 : 128] };
  }
  if (ipaddr.isValidCIDR(bare)) {
    const [address, bits] = ipaddr.parseCIDR(bare);
    return { kind: 'cidr', range: [address, bits] };
  }
  if (/^\.?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*\.?$/.test(entry)) {
    const subdomains = entry.startsWith('.');
    return { kind: 'host', host: normalHost(subdomains ? entry.slice(1) : entry), subdomains };
  }
  throw new Error(
    `${name}: ${JSON.stringify(entry)} is not a host name, an IP address or a CIDR (e.g. hooks.example.com, .example.com, 127.0.0.1, 10.0.0.0/8)`,
  );
}

function normalHost(host: string): string {
  return host.toLowerCase().replace(/\.$/, '');
}

function matches(rule: Rule, host: string, address: Address | null): boolean {
  if (rule.kind === 'host') return host === rule.host || (rule.subdomains && host.endsWith(`.${rule.host}`));
  return address !== null && address.kind() === rule.range[0].kind() && address.match(rule.range);
}

/**
 * Whether Tally may connect to `ip` for `hostname`: throws DestinationRefused if not.
 * An IPv4-mapped IPv6 address is judged as the IPv4 address it is.
 */
export function checkAddress(ip: string, hostname: string, policy: DestinationPolicy): void {
  const host = normalHost(hostname);
  if (!ipaddr.isValid(ip)) throw new DestinationRefused(`${host} resolved to ${JSON.stringify(ip)}, which is no IP address`);
  const address = ipaddr.process(ip);
  const shown = address.toString() === host ? host : `${host} (${address.toString()})`;
  if (policy.deny.some((rule) => matches(rule, host, address))) throw new DestinationRefused(`${shown} is refused by TALLY_OUTBOUND_DENY`);
  if (policy.allow.some((rule) => matches(rule, host, address))) return;
  const range = rangeOf(address);
  if (range !== 'unicast') {
    throw new DestinationRefused(
      `${shown} is a ${range} address: only public addresses receive webhooks unless the operator lists it in TALLY_OUTBOUND_ALLOW`,
    );
  }
}

/**
 * IPv4-compatible IPv6 addresses (::/96, RFC 4291 §2.5.5.1, deprecated): `[::127.0.0.1]`
 * is written `::7f00:1`, which ipaddr.js classes as unicast, yet some stacks still route
 * it to the embedded IPv4 address. No public host has one, so the whole block is refused.
 */
const IPV4_COMPATIBLE = ipaddr.parseCIDR('::/96');

function rangeOf(address: Address): string {
  const range = address.range();
  if (range === 'unicast' && address.kind() === 'ipv6' && address.match(IPV4_COMPATIBLE)) return 'ipv4Compatible';
  return range;
}

/** The URL's host as a name or a bare IP literal (brackets of IPv6 removed). */
export function hostOf(url: URL): string {
  return normalHost(url.hostname.replace(/^\[(.*)\]$/, '$1'));
}

/**
 * What can be said from the URL alone: http or https, no credentials in it, a host; a
 * host on the deny list, or an IP literal the policy refuses, is refused. Returns the
 * parsed URL.
 */
export function checkUrl(text: string, policy: DestinationPolicy): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new InvalidDestinationUrl('url must be an absolute http or https URL, e.g. https://hooks.example.com/tally');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new InvalidDestinationUrl(`url must use http or https, not ${url.protocol.replace(/:$/, '')}`);
  if (url.username !== '' || url.password !== '') {
    throw new InvalidDestinationUrl('url must not carry credentials (user:password@): verify deliveries by their signature instead');
  }
  const host = hostOf(url);
  if (host === '') throw new InvalidDestinationUrl('url must name a host');
  if (ipaddr.isValid(host)) checkAddress(host, host, policy);
  else if (policy.deny.some((rule) => matches(rule, host, null))) throw new DestinationRefused(`${host} is refused by TALLY_OUTBOUND_DENY`);
  return url;
}

/** Every address a host name resolves to, as DNS answers now. */
export type Resolver = (hostname: string) => Promise<{ address: string; family: number }[]>;

export const systemResolver: Resolver = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/**
 * The registration check: checkUrl, then the addresses the host resolves to now, each of
 * which must be allowed. A host that does not resolve yet is accepted (DNS may be set up
 * after the endpoint); the check at delivery decides then.
 */
export async function checkRegistration(text: string, policy: DestinationPolicy, resolver: Resolver = systemResolver): Promise<URL> {
  const url = checkUrl(text, policy);
  const host = hostOf(url);
  if (ipaddr.isValid(host)) return url;
  const addresses = await resolver(host).catch(() => []);
  for (const { address } of addresses) checkAddress(address, host, policy);
  return url;
}

/**
 * A `lookup` for http.request: resolves the host, refuses the connection unless every
 * address DNS gave is allowed, and returns those very addresses, so the socket connects to
 * what was checked. (Node calls no lookup for an IP literal: checkUrl covers those.)
 */
export function guardedLookup(policy: DestinationPolicy, resolver: Resolver = systemResolver): LookupFunction {
  return (hostname, options, callback) => {
    resolver(hostname)
      .then((found) => {
        for (const { address } of found) checkAddress(address, hostname, policy);
        const wanted = options.family === 4 || options.family === 6 ? found.filter((a) => a.family === options.family) : found;
        if (wanted.length === 0) throw Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' });
        if (options.all) (callback as (e: null, a: { address: string; family: number }[]) => void)(null, wanted);
        else callback(null, wanted[0]!.address, wanted[0]!.family);
      })
      .catch((error: NodeJS.ErrnoException) => callback(error, '', 0));
  };
}
