/**
 * The command line that runs a tool file, by its extension. Python through the scan's
 * interpreter; JavaScript through this Node; TypeScript through this Node where it strips
 * types itself (Node 22.18 and newer), else through the `tsx` of the tool's own project.
 */
import { access } from 'node:fs/promises';
import { dirname, extname, join } from 'node:path';

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

/** Whether this Node runs .ts files itself (type stripping, on by default from 22.18). */
export function nodeStripsTypes(): boolean {
  return (process.features as { typescript?: string | false }).typescript === 'strip' || (process.features as { typescript?: string | false }).typescript === 'transform';
}

export async function runCommand(file: string, options: RuntimeOptions = {}): Promise<RunCommand> {
  switch (extname(file)) {
    case '.py':
      return { command: [options.python ?? 'python3', file] };
    case '.js':
    case '.mjs':
    case '.cjs':
      return { command: [process.execPath, file] };
    case '.ts':
    case '.mts':
    case '.cts': {
      if (nodeStripsTypes()) return { command: [process.execPath, file] };
      const tsx = await projectBin(dirname(file), 'tsx');
      if (tsx) return { command: [tsx, file] };
      return {
        problem:
          `Node ${process.versions.node} cannot run .ts files itself and no tsx was found in node_modules/.bin from ${dirname(file)} upward; ` +
          'install it in the tool\'s project (npm install --save-dev tsx), build the tool (twylt build), or use Node 22.18 or newer',
      };
    }
    default:
      return { problem: `no runtime is known for ${extname(file) || 'files without an extension'}` };
  }
}

/** node_modules/.bin/NAME in `dir` or the nearest parent that has it. */
async function projectBin(dir: string, name: string): Promise<string | undefined> {
  for (let at = dir; ; at = dirname(at)) {
    const bin = join(at, 'node_modules', '.bin', name);
    try {
      await access(bin);
      return bin;
    } catch {
      if (dirname(at) === at) return undefined;
    }
  }
}
