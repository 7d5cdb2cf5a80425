/**
 * Tool packs: find the TWYLT tools of folders, install what they need, and serve them as a
 * catalog (the tool-set config `--config` takes). A scan executes code from the folders:
 * each entry point it finds is run to describe itself.
 */
import { stat } from 'node:fs/promises';
import { ConfigError } from '../config.js';
import type { ToolEntry } from '../entry.js';
import { scannedEntries } from './catalog.js';
import { scanTools, type ScanOptions } from './scan.js';

export { catalogText, namesKept, scannedEntries, writeCatalog } from './catalog.js';
export { discoverTools, MANIFEST, SHARED, type DiscoverOptions, type FoundTool } from './discover.js';
export { fingerprint } from '../fingerprint.js';
export { ENVS_DIR_ENV, defaultEnvsDir, installEnv, planEnv, type EnvPlan } from './install.js';
export { runCommand, nodeStripsTypes, TOOL_FILES, PYTHON_LAUNCHER } from './runtime.js';
export { scanTools, type ScanOptions, type ScanStatus, type ScannedTool } from './scan.js';
export { WORKSPACES_DIR_ENV, defaultWorkspacesDir, workspaceOf } from './workspaces.js';

/**
 * What a consumer started with `--scan DIR` serves: the usable tools of a scan (installing
 * nothing); each other tool is handed to `report` with its reason.
 */
export async function scanForServing(dirs: readonly string[], options: ScanOptions, report: (line: string) => void): Promise<ToolEntry[]> {
  for (const dir of dirs) {
    const info = await stat(dir).catch(() => undefined);
    if (!info?.isDirectory()) throw new ConfigError(`--scan ${dir}: not a folder`);
  }
  const tools = await scanTools(dirs, options);
  for (const tool of tools) if (tool.status !== 'ok') report(`left out ${tool.source} (${tool.status}): ${tool.reason}`);
  return scannedEntries(tools);
}
