/** Running `twylt scan` over the fixture packs (tests/fixtures/packs) in the tests of this folder. */
import { cpSync, mkdirSync, mkdtempSync, readdirSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runsTypeScript } from '../../packages/twylt/src/bootstrap/typescript.js';
import type { ScannedTool } from '../../packages/twylt/src/toolset/catalog/scan.js';
import { python } from '../support/python.js';
import { ROOT } from '../support/process.js';
import { runtimeBinary, runtimeMissing } from '../support/runtimes.js';
import { runTwylt, type CliRun } from '../support/twylt-cli.js';

export const PACKS = fileURLToPath(new URL('../fixtures/packs/', import.meta.url));

/** A row of `twylt scan --json`: what the scan knows of a tool, minus what only the catalog keeps. */
export type Row = Omit<ScannedTool, 'spec' | 'inputs' | 'hash'>;

/** A runtime a TypeScript tool is scanned with: `node` undefined and `skip` saying why where it is missing. */
export interface ScanRuntime {
  id: string;
  label: string;
  node: string | undefined;
  skip: string | undefined;
}

/** The two ways Node runs a `.ts` tool: through tsx (before 22.18), and by stripping types. */
export function typeScriptNodes(): ScanRuntime[] {
  const node22 = runtimeBinary('node22');
  return [
    { id: '20', label: 'Node 20 through tsx', node: process.execPath, skip: runsTypeScript() ? 'this Node strips types itself' : undefined },
    { id: '22', label: 'Node 22 through type stripping', node: node22, skip: node22 === undefined ? runtimeMissing('node22') : undefined },
  ];
}

/** A describe block's title for `runtime`, saying why when it is skipped. */
export const runtimeTitle = (runtime: ScanRuntime) => `${runtime.label}${runtime.skip ? `: skipped, ${runtime.skip}` : ''}`;

/** A fresh folder for one test's files: markers, environments, catalogs. */
export function scratch(name: string): string {
  return mkdtempSync(join(tmpdir(), `twylt-${name}-`));
}

/** The marker files that scripts which must never run leave behind in `dir`. */
export function markers(dir: string): string[] {
  return readdirSync(dir).filter((name) => name.startsWith('ran-'));
}

/** Where the tools scanned here run (workspaces.ts): one folder of the tests', not the user's state folder. */
export const WORKSPACES = join(tmpdir(), 'twylt-test-workspaces');

/** `twylt scan ARGS --python <the real interpreter>` (a pyenv shim would cost a second per start). */
export function scan(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  return runTwylt(['scan', ...args, ...(python ? ['--python', python] : [])], { env: { TWYLT_WORKSPACES_DIR: WORKSPACES, ...env } });
}

/** `twylt scan --json`: the exit code and the rows, by entry file relative to the packs folder. */
export async function scanJson(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; rows: Map<string, Row>; stderr: string }> {
  const result = await scan(['--json', ...args], env);
  let report: { tools: Row[] };
  try {
    report = JSON.parse(result.stdout);
  } catch {
    throw new Error(`twylt scan printed no JSON (exit ${result.code}):\n${result.stdout}\n${result.stderr}`);
  }
  return { code: result.code, stderr: result.stderr, rows: new Map(report.tools.map((row) => [row.source.replace(PACKS, ''), row])) };
}

/** A copy of a fixture pack in `dir`, where its JavaScript tools find `twylt` (linked to this repository's package). */
export function copyPack(name: string, dir: string): string {
  const target = join(dir, name);
  cpSync(join(PACKS, name), target, { recursive: true });
  mkdirSync(join(dir, 'node_modules'), { recursive: true });
  symlinkSync(join(ROOT, 'packages', 'twylt'), join(dir, 'node_modules', 'twylt'), 'dir');
  return target;
}
