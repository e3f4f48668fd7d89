export {
  ConfigError,
  DEFAULT_CONFIG,
  debugStacks,
  loadConfig,
  processConfig,
  processReadings,
  readSettings,
  type Config,
  type Reading,
  type Source,
} from './load.js';
export { configJson, configLines, maskUrlPassword, settingsTable, shown } from './effective.js';
export { FAILPOINT_NAMES, LOG_LEVELS, SETTINGS, type SettingKey } from './settings.js';
