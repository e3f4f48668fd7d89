import { Command, Option } from 'commander';
import { apiAction, callApi, withApiOptions, type ApiOptions, type Caller } from './api-client.js';

/**
 * `tally api-keys create|list|revoke`: a tenant's named API keys over a running server's
 * HTTP API (POST, GET and DELETE /v1/api-keys). Without --tenant it is the tenant's own
 * call (--token or TALLY_API_KEY); with --tenant it is the admin's for that tenant
 * (--token, TALLY_ADMIN_TOKEN or the kept admin token).
 */

interface KeyCommandOptions extends ApiOptions {
  tenant?: string;
}

const callerOf = (options: KeyCommandOptions): Caller => (options.tenant === undefined ? 'tenant' : 'admin');
const tenantOption = () => new Option('--tenant <tenant_id>', "the admin's call for this tenant (default: the tenant's own call, with its api_key)");
const described = (command: Command) => withApiOptions(command, 'tenant').addOption(tenantOption());

export function registerApiKeyCommands(program: Command): void {
  const keys = program.command('api-keys').description("a tenant's named API keys: create (shown once), list, revoke");
  described(keys.command('create').description('make a named API key; the answer carries the key, shown only once').argument('<name>', 'e.g. production'))
    .option('--idempotency-key <key>', 'Idempotency-Key header: a retry with the same key and body replays the first answer, the same api_key')
    .action(
      apiAction('api-keys create', (name: string, options: KeyCommandOptions & { idempotencyKey?: string }) =>
        callApi(options, {
          caller: callerOf(options),
          method: 'POST',
          path: '/v1/api-keys',
          body: { name, ...(options.tenant !== undefined ? { tenant_id: options.tenant } : {}) },
          idempotencyKey: options.idempotencyKey,
        }),
      ),
    );
  described(keys.command('list').description('the keys, newest first, with when each was last used and revoked (never the keys themselves)'))
    .option('--limit <n>', 'keys per page (1 to 100)')
    .option('--starting-after <id>', 'the page after this key (older)')
    .action(
      apiAction('api-keys list', (options: KeyCommandOptions & { limit?: string; startingAfter?: string }) => {
        const query = new URLSearchParams({
          ...(options.tenant !== undefined ? { tenant_id: options.tenant } : {}),
          ...(options.limit !== undefined ? { limit: options.limit } : {}),
          ...(options.startingAfter !== undefined ? { starting_after: options.startingAfter } : {}),
        }).toString();
        return callApi(options, { caller: callerOf(options), method: 'GET', path: `/v1/api-keys${query ? `?${query}` : ''}` });
      }),
    );
  described(keys.command('revoke').description('revoke a key: refused from the next request on; revoking again answers the same').argument('<key_id>', 'the id from create or list'))
    .action(
      apiAction('api-keys revoke', (key: string, options: KeyCommandOptions) => {
        const query = options.tenant !== undefined ? `?${new URLSearchParams({ tenant_id: options.tenant }).toString()}` : '';
        return callApi(options, { caller: callerOf(options), method: 'DELETE', path: `/v1/api-keys/${encodeURIComponent(key)}${query}` });
      }),
    );
}
