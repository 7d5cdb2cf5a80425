/**
 * The command line that runs a tool file, by its extension. Python through the scan's
 * interpreter; JavaScript and TypeScript through this runtime and twylt's launcher
 * (bootstrap/launch.ts, ADR 0035), which lets a tool describe itself while its packages are
 * missing, resolves an installed environment's packages and twylt itself for ES module
 * imports, and runs .ts through tsx (the project's, else the one beside twylt) where Node
 * cannot strip types itself (before 22.18).
 */
import { createRequire } from 'node:module';
import { dirname, extname, join } from 'node:path';
import { findTsx, runsTypeScript } from '../../bootstrap/typescript.js';

/** A command, or why there is none and how to get one. */
export type RunCommand = { command: string[] } | { problem: string };

export interface RuntimeOptions {
  /** The interpreter of `.py` tools (default `python3`, found through PATH). */
  python?: string;
}

/** The names a tool's entry file may have; anything else is never run. */
export const TOOL_FILES = ['tool.py', 'tool.ts', 'tool.mts', 'tool.js', 'tool.mjs'] as const;

/** Python's launcher beside a tool.py: preferred, it can describe a tool whose dependencies are missing. */
export const PYTHON_LAUNCHER = 'run.py';

/** Whether this runtime runs .ts files itself (Node 22.18+ strips types; Bun, Deno). */
export function nodeStripsTypes(): boolean {
  return runsTypeScript();
}

export async function runCommand(file: string, options: RuntimeOptions = {}): Promise<RunCommand> {
  switch (extname(file)) {
    case '.py':
      return { command: [options.python ?? 'python3', file] };
    case '.js':
    case '.mjs':
    case '.cjs':
      return { command: launched(file) };
    case '.ts':
    case '.mts':
    case '.cts': {
      if (runsTypeScript() || findTsx(file) !== undefined) return { command: launched(file) };
      return {
        problem:
          `Node ${process.versions.node} cannot run .ts files itself and no tsx was found from ${dirname(file)} upward nor beside twylt; ` +
          'install it in the tool\'s project (npm install --save-dev tsx), build the tool (twylt build), or use Node 22.18 or newer',
      };
    }
    default:
      return { problem: `no runtime is known for ${extname(file) || 'files without an extension'}` };
  }
}

/** twylt's launcher, beside this package's other built files. */
export function launcherFile(): string {
  return join(dirname(createRequire(import.meta.url).resolve('twylt/package.json')), 'dist', 'bootstrap', 'launch.js');
}

/** The argv running `file` through the launcher on this runtime. */
function launched(file: string): string[] {
  const versions = process.versions as NodeJS.ProcessVersions & { bun?: string; deno?: string };
  // Bun would fetch a missing package from the registry on its own (auto-install): never for a scanned tool.
  if (versions.bun !== undefined) return [process.execPath, '--no-install', launcherFile(), file];
  if (versions.deno !== undefined) return [process.execPath, 'run', '-A', launcherFile(), file];
  return [process.execPath, launcherFile(), file];
}
