/**
 * A TypeScript project folder outside the repository, as a newcomer has one: package.json,
 * tools/run.ts (the echo example) and tsx, twylt and zod in its own node_modules (links into
 * the repository). NPM_ISOLATED points npm's global prefix and cache at empty folders and
 * makes it offline, so no global or cached tsx can answer for the project's.
 */
import { cpSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { repoRoot } from './twylt-cli.js';

/** The environment for npm inside `scratch`: offline, with an empty prefix and cache. */
export function npmIsolated(scratch: string): Record<string, string> {
  return {
    npm_config_prefix: join(scratch, 'npm-global'),
    npm_config_cache: join(scratch, 'npm-cache'),
    npm_config_offline: 'true',
    npm_config_update_notifier: 'false',
  };
}

/** Makes `<scratch>/ts-project` (see above) and npm's empty folders; returns the project's path. */
export function tsProject(scratch: string): string {
  const dir = join(scratch, 'ts-project');
  mkdirSync(join(dir, 'tools'), { recursive: true });
  mkdirSync(join(dir, 'node_modules', '.bin'), { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'ts-project', private: true, type: 'module' }));
  cpSync(join(repoRoot, 'examples/echo/tool.ts'), join(dir, 'tools/run.ts'));
  symlinkSync(join(repoRoot, 'node_modules/tsx'), join(dir, 'node_modules/tsx'), 'dir');
  symlinkSync(join(repoRoot, 'packages/twylt'), join(dir, 'node_modules/twylt'), 'dir');
  symlinkSync(join(repoRoot, 'node_modules/zod'), join(dir, 'node_modules/zod'), 'dir');
  symlinkSync('../tsx/dist/cli.mjs', join(dir, 'node_modules/.bin/tsx'));
  const npm = npmIsolated(scratch);
  for (const npmDir of [npm.npm_config_prefix!, npm.npm_config_cache!]) mkdirSync(npmDir, { recursive: true });
  return dir;
}

/**
 * For a test file: a scratch folder named `prefix...` (removed after the file's tests), npm's
 * environment isolated in it, and the project inside it, made before the file's tests.
 */
export function useTsProject(prefix: string): { scratch: string; npm: Record<string, string>; project: string } {
  const scratch = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  beforeAll(() => void tsProject(scratch));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));
  return { scratch, npm: npmIsolated(scratch), project: join(scratch, 'ts-project') };
}
