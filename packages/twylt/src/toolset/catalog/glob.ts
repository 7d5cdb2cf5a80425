/**
 * Globs over slash-separated relative paths: `*` and `?` within one segment, `**` across
 * segments. Turned into regular expressions without nested quantifiers (linear to match).
 */

export class Glob {
  readonly text: string;
  readonly #pattern: RegExp;
  readonly #segments: RegExp[];

  constructor(text: string) {
    this.text = text.replace(/^\.\//, '').replace(/\/+$/, '');
    const parts = this.text.split('/').map((segment, at, all) => (segment !== '**' ? `${segmentSource(segment)}/` : at === all.length - 1 ? '.*' : '(?:.*/)?'));
    this.#pattern = new RegExp(`^${parts.join('').replace(/\/$/, '')}$`);
    this.#segments = this.text.split('/').filter((segment) => !/^[*?]*$/.test(segment)).map((segment) => new RegExp(`^${segmentSource(segment)}$`));
  }

  /** Whether the whole relative path matches. */
  matches(path: string): boolean {
    return this.#pattern.test(path);
  }

  /** Whether the glob names this folder in one of its segments (a wildcard alone names nothing). */
  names(folder: string): boolean {
    return this.#segments.some((segment) => segment.test(folder));
  }
}

function segmentSource(segment: string): string {
  return segment.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*+/g, '[^/]*').replace(/\?/g, '[^/]');
}
