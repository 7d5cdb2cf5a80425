/** The twylt package's version, for `twylt --version`; read only when asked. */
import { readFileSync } from 'node:fs';

export function packageVersion(): string {
  // src/cli/, dist/cli/ and dist/chunks/ all lie two levels below the package root.
  const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return manifest.version;
}
