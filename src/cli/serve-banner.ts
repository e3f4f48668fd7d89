import { isIPv6 } from 'node:net';
import { DEFAULT_URL } from './api-client.js';

/** A URL a browser or `curl` on this machine can open, for the address the server is bound to. */
export function localUrl(host: string, port: number): string {
  const reachable = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return `http://${isIPv6(reachable) ? `[${reachable}]` : reachable}:${port}/`;
}

/** What the database already holds, for the banner's last line. */
export interface Holdings {
  tenants: number;
  wallets: number;
}

const count = (n: number, noun: string) => `${n} ${noun}${n === 1 ? '' : 's'}`;

/**
 * What a person who just ran `npm start` needs next: where the API and the console are,
 * where the API's description is, and a first command that works as printed (it names the URL when
 * it is not the CLI's default). The first step is for an empty database only: after a restart
 * with tenants in it, "create acme" is not what comes next, so the line says what is there
 * and where to look at it instead.
 */
export function readyLines(host: string, port: number, holdings: Holdings): string[] {
  const url = localUrl(host, port);
  const base = url.slice(0, -1);
  const everywhere = host === '0.0.0.0' || host === '::' ? ` (listening on every interface, HOST=${host})` : '';
  const prefix = base === DEFAULT_URL ? '' : `TALLY_URL=${base} `;
  const next =
    holdings.tenants === 0
      ? `  First step, in another terminal: ${prefix}./bin/tally tenants create acme   (README.md "Quickstart" goes on from there)`
      : `  This database has ${count(holdings.tenants, 'tenant')} and ${count(holdings.wallets, 'wallet')}: see them in the console, or ${prefix}./bin/tally jobs list   (README.md "Commands")`;
  return [
    `Tally is ready: ${url}${everywhere}`,
    `  Console (sign in with the admin token): ${base}/console`,
    `  API description (OpenAPI 3): ${base}/openapi.json`,
    next,
  ];
}
