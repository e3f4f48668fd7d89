import { Command, InvalidArgumentError } from 'commander';
import { DISCARD_NOTE_MAX_LENGTH } from '../queue/index.js';
import { DEFAULT_SETTLE_CONCURRENCY } from './defaults.js';
import { processConfig } from '../config/index.js';
import { reportFatal } from './fatal.js';
import { registerApiKeyCommands } from './api-key-commands.js';
import { registerGrantCommands } from './grant-commands.js';
import { registerGrantApiCommands } from './grant-api-commands.js';
import { registerJobCommands } from './job-commands.js';
import { registerPaymentCommands } from './payments.js';
import { registerOperatorCommands } from './operator-commands.js';
import { registerSendWebhook } from './send-webhook.js';
import { registerStatement } from './statement.js';

export function positiveInteger(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n)) throw new InvalidArgumentError('expected a non-negative integer');
  return n;
}

/**
 * A command's module loads when the command runs: `tally jobs show` then starts in a
 * fraction of the time it takes to load the server, the worker and their dependencies.
 */
function lazy<A extends unknown[]>(load: () => Promise<(...args: A) => Promise<void>>) {
  return async (...args: A): Promise<void> => (await load())(...args);
}

const program = new Command()
  .name('tally')
  .description('Exactly-once billing for wallet-funded asynchronous AI inference jobs')
  .showHelpAfterError()
  // Every command starts by reading the configuration (src/config/): an invalid setting
  // stops it before it does anything, with a sentence naming the setting. The command
  // hands the values down; the two test knobs met deep in the ledger's paths, where no
  // call carries them, are set here once for the process (loaded only when set).
  .hook('preAction', async () => {
    const config = processConfig();
    if (config.failpoints.length > 0) (await import('../failpoints.js')).armFailpoints(config.failpoints);
    if (config.checkResponses) (await import('../outbound/enqueue.js')).checkOutboundMessages(true);
  });

program
  .command('serve')
  .description('HTTP API and in-process settlement workers (embedded PostgreSQL when DATABASE_URL is unset)')
  .option('--port <n>', 'port to listen on (default $PORT or 8080)', positiveInteger)
  .option('--workers <n>', 'in-process settlement loops, two per core by default; 0 runs none', positiveInteger, DEFAULT_SETTLE_CONCURRENCY)
  .action(lazy(async () => (await import('./serve.js')).serveCommand));

program
  .command('worker')
  .description('a standalone settlement worker; any number may run against one database')
  .option(
    '--concurrency <n>',
    'settlement loops (each settles a batch at a time), two per core by default',
    positiveInteger,
    DEFAULT_SETTLE_CONCURRENCY,
  )
  .option('--metrics-port <n>', 'serve Prometheus metrics on GET /metrics at this port ($HOST, bearer $TALLY_METRICS_TOKEN when set); none by default', positiveInteger)
  .action(lazy(async () => (await import('./worker.js')).workerCommand));

program
  .command('migrate')
  .description('apply pending database migrations (serve and worker also do at start)')
  .action(lazy(async () => (await import('./migrate.js')).migrateCommand));

program
  .command('reconcile')
  .description('one reconciliation run; exits 0 when clean, 1 when exceptions were found')
  .option('--json', 'print the run as JSON')
  .option('--repair', 'repair what has a keyed repair (stuck and dead events, expired holds, drifted projections, overdue grant expiries)')
  .action(lazy(async () => (await import('./reconcile.js')).reconcileCommand));

program
  .command('import-usage')
  .description("import a provider's usage records (JSON lines or CSV) for reconciliation")
  .argument('<file>', 'JSON lines {provider, provider_job_ref, usage} or CSV provider,provider_job_ref,<dimension>...')
  .action(lazy(async () => (await import('./import-usage.js')).importUsageCommand));

program
  .command('discard')
  .description("set a dead-lettered event aside for good, with why; its job's hold no longer waits for it")
  .argument('<provider>', 'the provider the event came from')
  .argument('<event_key>', 'the event key (for the generic provider, the webhook-id)')
  .requiredOption('--note <text>', `why it is discarded (recorded with who and when; at most ${DISCARD_NOTE_MAX_LENGTH} characters)`)
  .option('--json', 'print the discarded event as JSON')
  .action(lazy(async () => (await import('./discard.js')).discardCommand));

program
  .command('demo')
  .description('embedded database, server, workers and a chaotic simulated provider; prints what was billed')
  .option('--jobs <n>', 'jobs to run', positiveInteger, 300)
  .option('--seed <n>', 'seed of the chaos (default: random, printed)', positiveInteger)
  .option('--concurrency <n>', 'deliveries in flight', positiveInteger, 32)
  .option('--serve', 'keep the server running after the report, to look at the data in the console (Ctrl-C stops it)')
  .option('--port <n>', 'with --serve: the port (default $PORT or 8080)', positiveInteger)
  .action(lazy(async () => (await import('./demo.js')).demoCommand));

program
  .command('config')
  .description('the effective configuration: every setting, its value and where it came from (env or default), secrets masked')
  .option('--json', 'print it as JSON')
  .option('--markdown', "print the settings' table (README's Configuration section)")
  .action(lazy(async () => (await import('./config.js')).configCommand));

// Over the HTTP API of a running server (--url, --token): the operator's common actions.
registerOperatorCommands(program);
registerJobCommands(program);
registerGrantApiCommands(program);
registerApiKeyCommands(program);
registerSendWebhook(program);
registerStatement(program);
// On the database itself, like reconcile; after the API's commands, so it joins their `grants`.
registerGrantCommands(program);
registerPaymentCommands(program);

program.parseAsync(process.argv).catch(reportFatal);
