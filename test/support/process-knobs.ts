import { processConfig } from '../../src/config/index.js';
import { checkOutboundMessages } from '../../src/outbound/enqueue.js';

/**
 * What every `tally` command does at start for the outbox's schema check (src/cli/main.ts),
 * done for the test process itself: a test that settles in process (the ledger writing its
 * outbound messages) checks each message's data as a spawned `tally serve` does, under
 * vitest.config.ts's TALLY_CHECK_RESPONSES=1. Failpoints are not armed here: a test arms
 * them in the `tally` processes it starts.
 */
checkOutboundMessages(processConfig().checkResponses);
