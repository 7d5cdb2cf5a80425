/**
 * The Python 3 interpreter for tests of the foreign fixture tool, or a reason to skip.
 * Resolved once to the real executable: version-manager shims (pyenv) cost a second or
 * more per start, which would swamp a suite that starts Python hundreds of times.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

function find(): string | undefined {
  for (const candidate of ['python3', 'python']) {
    try {
      const out = execFileSync(candidate, ['-c', 'import sys; print(sys.executable if sys.version_info >= (3, 8) else "")'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
      if (out) return out;
    } catch {
      // not installed
    }
  }
  return undefined;
}

export const python = find();
export const noPython = python === undefined;
export const NO_PYTHON_REASON = 'python3 (3.8 or newer) is not installed: the foreign-tool tests are skipped';

export const fixtures = fileURLToPath(new URL('../fixtures/python/', import.meta.url));
/** argv of a hand-written Python tool: the echo tool, the shapes tool (`'shapes'`), or a broken variant of either. */
export function pythonTool(variant?: string): string[] {
  const file = variant === undefined ? 'echo_tool.py' : variant === 'shapes' ? 'shapes_tool.py' : `broken/${variant}.py`;
  return [python ?? 'python3', `${fixtures}${file}`];
}

/** argv of the Python tool that prints numbers as Python writes them (integers beyond 2^53, 1e-07, 1.0). */
export function pythonNumbersTool(): string[] {
  return [python ?? 'python3', `${fixtures}numbers_tool.py`];
}
