/** What the sandbox tests need: Linux and bubblewrap (`.ci/run` installs Debian's). */
import { spawnSync } from 'node:child_process';

function skipReason(): string | undefined {
  if (process.platform !== 'linux') return `the sandbox is Linux only for now, and this is ${process.platform}`;
  const probe = spawnSync('bwrap', ['--ro-bind', '/', '/', '--unshare-all', '--', 'true']);
  if (probe.error) return 'bubblewrap (bwrap) is not installed (Debian: apt-get install bubblewrap)';
  if (probe.status !== 0) return `bubblewrap cannot make a sandbox here: ${probe.stderr.toString().trim()}`;
  return undefined;
}

/** Why the sandbox tests cannot run here, or undefined when they can. */
export const SANDBOX_SKIP_REASON = skipReason();
