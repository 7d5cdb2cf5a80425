/**
 * The command line that runs a tool file, by its extension, with the runtime named by what
 * it is: `python3` and `node` found through PATH where the tool runs, or the interpreter
 * the scan was given (`--python`, `--node`), never the path of the binary that ran the
 * scan: a catalog must survive a runtime upgrade and a move to another machine.
 * TypeScript runs on that Node where it strips types itself (Node 22.18 and newer), else
 * through the `tsx` of the tool's own project, named relative to the tool's folder.
 */
import { execFile } from 'node:child_process';
import { access } from 'node:fs/promises';
import { dirname, extname, join, relative, sep } from 'node:path';

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

export async function runCommand(file: string, options: RuntimeOptions = {}): Promise<RunCommand> {
  const node = options.node ?? 'node';
  switch (extname(file)) {
    case '.py':
      return { command: [options.python ?? 'python3', file] };
    case '.js':
    case '.mjs':
    case '.cjs': {
      const facts = await nodeFacts(node);
      return 'problem' in facts ? facts : { command: [node, file] };
    }
    case '.ts':
    case '.mts':
    case '.cts': {
      const facts = await nodeFacts(node);
      if ('problem' in facts) return facts;
      if (facts.stripsTypes) return { command: [node, file] };
      const tsx = await projectBin(dirname(file), 'tsx');
      if (tsx) return { command: [tsx, file] };
      return {
        problem:
          `Node ${facts.version} (${node}) cannot run .ts files itself and no tsx was found in node_modules/.bin from ${dirname(file)} upward; ` +
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
      execFile(node, ['-e', code], { timeout: 30_000 }, (error, stdout) => {
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

/** node_modules/.bin/NAME in `dir` or the nearest parent that has it, relative to `dir`. */
async function projectBin(dir: string, name: string): Promise<string | undefined> {
  for (let at = dir; ; at = dirname(at)) {
    const bin = join(at, 'node_modules', '.bin', name);
    try {
      await access(bin);
      // Relative to the tool's folder (where it runs): the catalog moves with the project.
      return relative(dir, bin).split(sep).join('/');
    } catch {
      if (dirname(at) === at) return undefined;
    }
  }
}
