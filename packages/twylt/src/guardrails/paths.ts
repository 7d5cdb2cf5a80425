/** Pure path logic of the policy: containment by components, virtual paths, syntax. */
import { relative, sep } from 'node:path';
import type { DenyCode } from './codes.js';

/** True when `target` is `root` or below it, compared by whole components (/runs-other is not in /runs). Both absolute and normalized. */
export function isWithin(root: string, target: string): boolean {
  if (target === root) return true;
  const prefix = root.endsWith(sep) ? root : root + sep;
  return target.startsWith(prefix);
}

/** The tool's view of a host path inside the root: `/` is the root itself. */
export function virtualPath(root: string, target: string): string {
  const rest = relative(root, target);
  return rest === '' ? '/' : `/${rest.split(sep).join('/')}`;
}

const WINDOWS_RESERVED = /^(con|prn|aux|nul|com[1-9]|lpt[1-9])$/i;

/**
 * What is wrong with a business path as written, before it touches the file system:
 * null when it may be resolved. Virtual paths use `/` only; anything that could mean
 * "elsewhere" on some platform (a drive, a UNC or `//` prefix, `~`, a backslash) is refused.
 */
export function pathSyntaxProblem(value: unknown, windows = process.platform === 'win32'): DenyCode | null {
  if (typeof value !== 'string' || value === '' || value.includes('\0')) return 'invalid_path';
  if (value.includes('\\') || value.includes(':') || value.startsWith('//') || value.startsWith('~')) return 'invalid_path_syntax';
  const parts = value.split('/');
  if (parts.includes('..')) return 'path_outside_workspace';
  if (windows && parts.some((part) => part !== '' && part !== '.' && windowsUnsafe(part))) return 'invalid_path_syntax';
  return null;
}

/** Names Windows maps to devices or silently rewrites (trailing dot or blank). */
function windowsUnsafe(part: string): boolean {
  return part.endsWith('.') || part.endsWith(' ') || WINDOWS_RESERVED.test(part.split('.')[0]!);
}

/** The components of a checked virtual path, without empty and `.` ones. */
export function virtualParts(value: string): string[] {
  return value.split('/').filter((part) => part !== '' && part !== '.');
}
