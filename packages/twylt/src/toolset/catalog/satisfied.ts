/**
 * Whether what a Python tool declares is installed for the interpreter it runs on, asked of
 * that interpreter, isolated (`-I`: neither PYTHONPATH nor the working directory counts,
 * as for the tool a client starts with a bare environment): importlib.metadata gives the
 * installed version, and `packaging` (when the interpreter has it) checks the specifier,
 * else an `==` pin is compared as text and any other specifier asks for presence only.
 */
import { execFile } from 'node:child_process';
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
