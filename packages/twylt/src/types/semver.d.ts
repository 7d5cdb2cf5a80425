/** The part of semver (npm's own, no types of its own published) that catalog/satisfied.ts uses. */
declare module 'semver' {
  /** The range normalized, or null when `range` is not a semver range (a tag, a URL, `file:`). */
  export function validRange(range: string): string | null;
  export function satisfies(version: string, range: string, options?: { includePrerelease?: boolean }): boolean;
}
