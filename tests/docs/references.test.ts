/**
 * References that must keep resolving: relative markdown links (file, and heading anchor when
 * given) and "X.md section N" references, in the docs and in source comments; and the
 * schemas.md comparison commands, which must run.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, run } from '../support/process.js';
import { blocksUnder, readDoc } from './markdown.js';

/** Files under `dir` (relative to the root) whose names end with one of `endings`. */
function filesUnder(dir: string, endings: string[]): string[] {
  const found: string[] = [];
  const walk = (path: string) => {
    for (const entry of readdirSync(join(ROOT, path), { withFileTypes: true })) {
      const child = join(path, entry.name);
      if (entry.isDirectory() && entry.name !== 'node_modules' && entry.name !== 'dist') walk(child);
      else if (entry.isFile() && endings.some((ending) => entry.name.endsWith(ending))) found.push(child);
    }
  };
  if (existsSync(join(ROOT, dir))) walk(dir);
  return found;
}

const packageReadmes = readdirSync(join(ROOT, 'packages')).map((name) => join('packages', name, 'README.md')).filter((path) => existsSync(join(ROOT, path)));
const DOCS = ['README.md', ...filesUnder('docs', ['.md']), ...packageReadmes];
const SOURCES = ['packages', 'tests', 'examples', 'bench', 'scripts'].flatMap((dir) => filesUnder(dir, ['.ts', '.tsx', '.mjs', '.py']));

/** Markdown without fenced blocks and inline code, where nothing is a link. */
function prose(markdown: string): string {
  return markdown.replace(/^```[^\n]*\n[\s\S]*?^```$/gm, '').replace(/`[^`\n]*`/g, (code) => (code.includes('](') ? '' : code));
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, -1 on repeats. */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  for (const match of markdown.replace(/^```[^\n]*\n[\s\S]*?^```$/gm, '').matchAll(/^#{1,6} (.+)$/gm)) {
    const slug = match[1]!.trim().toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, '').replace(/ /g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    result.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return result;
}

/** The numbers of a markdown file's numbered headings ("## 4. Validation issues" gives 4). */
function sectionNumbers(markdown: string): Set<string> {
  return new Set([...markdown.matchAll(/^#{1,6} (\d+)\. /gm)].map((match) => match[1]!));
}

/** A file named in a reference: relative to the referring file, else a doc of that name. */
function resolveNamed(from: string, name: string): string | undefined {
  for (const candidate of [join(dirname(from), name), join(ROOT, name)]) if (existsSync(candidate)) return candidate;
  const byName = DOCS.filter((doc) => doc === name || doc.endsWith(`/${name}`));
  return byName.length === 1 ? join(ROOT, byName[0]!) : undefined;
}

function brokenLinks(doc: string): string[] {
  const path = join(ROOT, doc);
  const broken: string[] = [];
  for (const match of prose(readFileSync(path, 'utf8')).matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    const target = match[1]!;
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto: ...
    const [file, anchor] = target.split('#') as [string, string | undefined];
    const resolved = file === '' ? path : join(dirname(path), decodeURIComponent(file));
    if (!existsSync(resolved)) {
      broken.push(`${target}: no such file`);
      continue;
    }
    if (anchor !== undefined && statSync(resolved).isFile() && resolved.endsWith('.md') && !anchors(readFileSync(resolved, 'utf8')).has(anchor)) {
      broken.push(`${target}: no heading with the anchor #${anchor} in ${relative(ROOT, resolved)}`);
    }
  }
  return broken;
}

/**
 * "X.md section N" (and "sections N and M"): X.md exists and has a heading "N. ...". A bare
 * "section N" in a markdown file means its own section N.
 */
function brokenSections(file: string, text: string, bareMeansSelf: boolean): string[] {
  const broken: string[] = [];
  for (const match of text.matchAll(/(?:([\w./-]+\.md)\]? )?\bsections? (\d[\d.]*\d|\d)((?:,? and \d[\d.]*\d|,? and \d)*)/g)) {
    const [, named, first, more] = match;
    if (!named && !bareMeansSelf) continue;
    const target = named ? resolveNamed(join(ROOT, file), named) : join(ROOT, file);
    if (!target) {
      broken.push(`"${match[0]}": ${named} does not exist`);
      continue;
    }
    const numbers = sectionNumbers(readFileSync(target, 'utf8'));
    for (const number of [first!, ...[...more!.matchAll(/\d[\d.]*/g)].map((m) => m[0])]) {
      if (!numbers.has(number)) broken.push(`"${match[0]}": ${relative(ROOT, target)} has no section ${number}`);
    }
  }
  return broken;
}

describe('links and section references resolve', () => {
  it('finds the docs to check', () => {
    expect(DOCS).toContain('docs/TWYLT.md');
    expect(SOURCES.length).toBeGreaterThan(50);
  });

  for (const doc of DOCS) {
    it(doc, () => {
      const text = prose(readFileSync(join(ROOT, doc), 'utf8'));
      expect([...brokenLinks(doc), ...brokenSections(doc, text, true)]).toEqual([]);
    });
  }

  it('in source comments', () => {
    const broken = SOURCES.flatMap((file) => brokenSections(file, readFileSync(join(ROOT, file), 'utf8'), false).map((problem) => `${file}: ${problem}`));
    expect(broken).toEqual([]);
  });
});

describe('schemas.md: the comparison with Ajv', () => {
  it('runs as written and prints both timings', async () => {
    const [block] = blocksUnder(readDoc('docs/schemas.md'), 'Why a hand-written JSON Schema validator', 'sh');
    const result = await run(['sh', '-ec', block!.body], { cwd: ROOT });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^twylt ok \d+\.\d ms\najv ok \d+\.\d ms\n$/);
  });
});
