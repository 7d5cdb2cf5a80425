/**
 * The command line that runs a tool file, by its extension, with the runtime named by what
 * it is: `python3` and `node` found through PATH where the tool runs, or the interpreter
 * the scan was given (`--python`, `--node`), never the path of the binary that ran the
 * scan: a catalog must survive a runtime upgrade and a move to another machine.
 * JavaScript and TypeScript run through twylt's launcher (bootstrap/launch.ts, ADR 0035),
 * which lets a tool describe itself while its packages are missing, resolves an installed
 * environment's packages and twylt itself for ES module imports, and runs .ts through tsx
 * (the project's, else the one beside twylt) on a Node that cannot strip types (before 22.18).
 */
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { basename, dirname, extname, join } from 'node:path';
import { findTsx } from '../../bootstrap/typescript.js';
import { NEUTRAL_CWD, commandPath } from './outside.js';

/** A command, or why there is none and how to get one. */
export type RunCommand = { command: string[] } | { problem: string };

export interface RuntimeOptions {
  /** The interpreter of `.py` tools (default `python3`, found through PATH). */
  python?: string;
  /** The Node of `.js` and `.ts` tools (default `node`, found through PATH). */
  node?: string;
}

/** The names a tool's entry file may have; anything else is never run. */
export const TOOL_FILES = ['tool.py', 'tool.ts', 'tool.mts', 'tool.js', 'tool.mjs'] as const;

/** Python's launcher beside a tool.py: preferred, it can describe a tool whose dependencies are missing. */
export const PYTHON_LAUNCHER = 'run.py';

/** Whether this Node runs .ts files itself (type stripping, on by default from 22.18). */
export function nodeStripsTypes(): boolean {
  const typescript = (process.features as { typescript?: string | false }).typescript;
  return typescript === 'strip' || typescript === 'transform';
}

/** The command that runs `file` (absolute), valid wherever it runs: a relative runtime path is made absolute. */
export async function runCommand(file: string, options: RuntimeOptions = {}): Promise<RunCommand> {
  const node = commandPath(options.node ?? 'node');
  switch (extname(file)) {
    case '.py':
      return { command: [commandPath(options.python ?? 'python3'), file] };
    case '.js':
    case '.mjs':
    case '.cjs': {
      const facts = await nodeFacts(node);
      return 'problem' in facts ? facts : { command: launched(node, file) };
    }
    case '.ts':
    case '.mts':
    case '.cts': {
      const facts = await nodeFacts(node);
      if ('problem' in facts) return facts;
      if (facts.stripsTypes || findTsx(file) !== undefined) return { command: launched(node, file) };
      return {
        problem:
          `Node ${facts.version} (${node}) cannot run .ts files itself and no tsx was found from ${dirname(file)} upward nor beside twylt; ` +
          "install it in the tool's project (npm install --save-dev tsx), build the tool (twylt build), or use Node 22.18 or newer (--node)",
      };
    }
    default:
      return { problem: `no runtime is known for ${extname(file) || 'files without an extension'}` };
  }
}

type NodeFacts = { version: string; stripsTypes: boolean } | { problem: string };
const facts = new Map<string, Promise<NodeFacts>>();

/** The version of the Node a tool will run on, and whether it strips types: asked once per command. */
function nodeFacts(node: string): Promise<NodeFacts> {
  let known = facts.get(node);
  if (!known) {
    known = new Promise((done) => {
      const code = 'const t = process.features.typescript; console.log(JSON.stringify([process.versions.node, t === "strip" || t === "transform"]))';
      // From `/`, not the scan's folder, which may be a pack (outside.ts).
      execFile(node, ['-e', code], { cwd: NEUTRAL_CWD, timeout: 30_000 }, (error, stdout) => {
        try {
          if (error) throw error;
          const [version, stripsTypes] = JSON.parse(String(stdout)) as [string, boolean];
          done({ version, stripsTypes });
        } catch (error) {
          done({ problem: `no Node to run it: "${node}" ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'is not found' : `did not answer (${(error as Error).message.split('\n')[0]})`}; name one with --node` });
        }
      });
    });
    facts.set(node, known);
  }
  return known;
}

/** twylt's launcher, beside this package's other built files. */
export function launcherFile(): string {
  return join(dirname(createRequire(import.meta.url).resolve('twylt/package.json')), 'dist', 'bootstrap', 'launch.js');
}

/** The argv running `file` through the launcher on `node` (Bun named by its command). */
function launched(node: string, file: string): string[] {
  // Bun would fetch a missing package from the registry on its own (auto-install): never for a scanned tool.
  if (/^bun(\.exe)?$/.test(basename(node))) return [node, '--no-install', launcherFile(), file];
  return [node, launcherFile(), file];
}
