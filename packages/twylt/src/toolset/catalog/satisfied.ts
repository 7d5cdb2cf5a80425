/**
 * Whether what a tool declares is installed where it runs. A Python tool: asked of
 * that interpreter, isolated (`-I`: neither PYTHONPATH nor the working directory counts,
 * as for the tool a client starts with a bare environment): importlib.metadata gives the
 * installed version, and `packaging` (when the interpreter has it) checks the specifier,
 * else an `==` pin is compared as text and any other specifier asks for presence only.
 * A JavaScript or TypeScript tool: its node_modules folders, read (unmetNpm).
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Interpreter } from './outside.js';

const CHECK = `
import json, re, sys
from importlib import metadata
try:
    from packaging.specifiers import SpecifierSet
except Exception:
    SpecifierSet = None
unmet = []
for spec in json.loads(sys.argv[1]):
    text = spec.split(';', 1)[0].strip()
    m = re.match(r'([A-Za-z0-9][A-Za-z0-9._-]*)\\s*(\\[[^\\]]*\\])?\\s*(.*)$', text)
    if not m:
        unmet.append(spec); continue
    name, wanted = m.group(1), m.group(3).strip()
    try:
        have = metadata.version(name)
    except metadata.PackageNotFoundError:
        unmet.append(spec); continue
    if not wanted:
        continue
    if SpecifierSet is not None:
        if not SpecifierSet(wanted).contains(have, prereleases=True): unmet.append(spec)
    elif wanted.startswith('==') and wanted[2:].strip() != have:
        unmet.append(spec)
print(json.dumps(unmet))
`;

/** The requirement specifiers of `specs` the interpreter does not satisfy; all of them when it cannot be asked. */
export function unmetPip(python: Interpreter, specs: readonly string[]): Promise<string[]> {
  return new Promise((resolve) => {
    execFile(python.executable, ['-I', '-c', CHECK, JSON.stringify(specs)], { timeout: 30_000, encoding: 'utf8' }, (error, stdout) => {
      if (error) return resolve([...specs]);
      try {
        resolve(JSON.parse(stdout) as string[]);
      } catch {
        resolve([...specs]);
      }
    });
  });
}

/**
 * The `name@range` specs of `specs` not installed where a JavaScript or TypeScript tool at
 * `source` runs: found as Node finds a package, in a node_modules folder from the tool's
 * folder upward (NODE_PATH does not count, as for a tool a client starts with a bare
 * environment; the launcher's own twylt packages are never asked: they are linked). A
 * semver range is checked against the installed version (semver, npm's own); any other
 * range (a `file:` tarball, a tag, a URL, an alias) asks for presence only.
 */
export async function unmetNpm(source: string, specs: readonly string[]): Promise<string[]> {
  if (specs.length === 0) return [];
  // Loaded only by a scan that meets an npm requirement (a dependency is optional weight, ADR 0003).
  const { satisfies, validRange } = await import('semver');
  const unmet: string[] = [];
  for (const spec of specs) {
    const at = spec.indexOf('@', 1);
    const [name, range] = at === -1 ? [spec, '*'] : [spec.slice(0, at), spec.slice(at + 1)];
    const have = await installedVersion(name, dirname(source));
    if (have === undefined) unmet.push(spec);
    else if (validRange(range) !== null && (have === null || !satisfies(have, range, { includePrerelease: true }))) unmet.push(spec);
  }
  return unmet;
}

/** The version of node_modules/NAME from `dir` upward: undefined when none is there, null when it says none. */
async function installedVersion(name: string, dir: string): Promise<string | null | undefined> {
  for (let at = dir; ; at = dirname(at)) {
    let text: string | undefined;
    try {
      text = await readFile(join(at, 'node_modules', name, 'package.json'), 'utf8');
    } catch {
      // Not in this folder: Node looks one up.
    }
    if (text !== undefined) {
      try {
        const version = (JSON.parse(text) as { version?: unknown }).version;
        return typeof version === 'string' ? version : null;
      } catch {
        return null;
      }
    }
    if (dirname(at) === at) return undefined;
  }
}
