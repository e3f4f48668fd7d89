import { ConfigError, configJson, configLines, processReadings, settingsTable } from '../config/index.js';
import { destinationPolicy } from '../outbound/destinations.js';

/**
 * `tally config`: the effective configuration, each setting with its value and where it
 * came from (env or default), secrets masked. An invalid configuration is refused the way
 * every command refuses it (exit 1, one sentence per setting), after the destination lists
 * are parsed too: they are only read by the code that uses them.
 */
export async function configCommand(options: { json?: boolean; markdown?: boolean }): Promise<void> {
  if (options.markdown) {
    console.log(settingsTable());
    return;
  }
  const { readings, problems } = processReadings();
  if (problems.length > 0) throw new ConfigError(problems);
  const value = (env: string) => readings.find((reading) => reading.setting.env === env)?.value as string | undefined;
  destinationPolicy({ TALLY_OUTBOUND_ALLOW: value('TALLY_OUTBOUND_ALLOW'), TALLY_OUTBOUND_DENY: value('TALLY_OUTBOUND_DENY') });
  if (options.json) console.log(JSON.stringify(configJson(readings), null, 2));
  else for (const line of configLines(readings)) console.log(line);
}
