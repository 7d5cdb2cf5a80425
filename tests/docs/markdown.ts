/**
 * Docs tested as written: the fenced blocks of a markdown file, and the console sessions among
 * them run for real and compared with the output they show.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../support/process.js';

export interface Block {
  lang: string;
  body: string;
  /** The nearest heading above the block, without its #s. */
  heading: string;
  /** 1-based line of the opening fence. */
  line: number;
  /** The last non-blank line above the block. */
  before: string;
}

export function readDoc(path: string): string {
  return readFileSync(join(ROOT, path), 'utf8');
}

/** Every fenced block (``` at the start of a line) with its language and heading. */
export function fencedBlocks(markdown: string): Block[] {
  const blocks: Block[] = [];
  const lines = markdown.split('\n');
  let heading = '';
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const fence = /^```(\S*)\s*$/.exec(line);
    if (!fence) {
      const title = /^#{1,6} (.*)$/.exec(line);
      if (title) heading = title[1]!;
      continue;
    }
    const start = i;
    const before = lines.slice(0, i).reverse().find((above) => above.trim() !== '') ?? '';
    const body: string[] = [];
    for (i++; i < lines.length && lines[i] !== '```'; i++) body.push(lines[i]!);
    blocks.push({ lang: fence[1]!, body: body.length ? `${body.join('\n')}\n` : '', heading, line: start + 1, before });
  }
  return blocks;
}

/** The blocks under the heading `heading` (exactly), in order. */
export function blocksUnder(markdown: string, heading: string, lang?: string): Block[] {
  return fencedBlocks(markdown).filter((block) => block.heading === heading && (lang === undefined || block.lang === lang));
}

/** The file a block is, when the line above it ends with "`name`:" (as in "The tool, in `echo.ts`:"). */
export function fileName(block: Block): string | undefined {
  return /`([^`\s]+)`:$/.exec(block.before)?.[1];
}

export interface Step {
  command: string;
  /** What the doc shows after the command (possibly nothing). */
  shown: string;
}

/** A console block: `$ command` lines, each followed by the output it shows. */
export function consoleSteps(block: Block): Step[] {
  const steps: Step[] = [];
  for (const line of block.body.replace(/\n$/, '').split('\n')) {
    if (line.startsWith('$ ')) steps.push({ command: line.slice(2), shown: '' });
    else if (steps.length > 0) steps[steps.length - 1]!.shown += `${line}\n`;
    else throw new Error(`console block at line ${block.line} does not start with "$ "`);
  }
  return steps;
}

const MARK = '@@twylt-docs-step@@';

/**
 * Runs the steps as one `sh` session (so `cd` and `$?` carry over, as in a terminal), stdout
 * and stderr interleaved as a terminal shows them. Resolves to each step's output.
 */
export function runSession(steps: Step[], options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs?: number }): Promise<string[]> {
  // The marker is printed with the last command's status kept, so that `$?` means what it shows.
  const mark = `status=$?; printf '%s\\n' '${MARK}'; (exit $status)`;
  const script = ['exec 2>&1', ...steps.flatMap((step) => [mark, step.command])].join('\n');
  return new Promise((resolve, reject) => {
    const child = spawn('sh', ['-c', script], { cwd: options.cwd, env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 120_000);
    child.on('error', reject);
    child.on('close', (_code, signal) => {
      clearTimeout(timer);
      if (signal) return reject(new Error(`the session was killed (${signal}) after: ${out}`));
      resolve(out.split(`${MARK}\n`).slice(1));
    });
  });
}

/** Text both sides are put through before comparing: what differs from run to run. */
export type Normalize = (text: string) => string;

/**
 * Does `actual` show what `shown` shows? JSON shown is compared as JSON, where the string
 * "..." stands for any value and `{"...": "..."}` for any object (key order counts). Other
 * text is compared line by line, where a line `...` stands for any number of lines.
 */
export function showsAs(shown: string, actual: string, normalize: Normalize = (text) => text): boolean {
  const expected = normalize(shown).trimEnd();
  const got = normalize(actual).trimEnd();
  const json = parseJson(expected);
  if (json !== undefined) {
    const value = parseJson(got);
    return value !== undefined && jsonMatches(json.value, value.value);
  }
  return linesMatch(expected.split('\n'), got.split('\n'));
}

function parseJson(text: string): { value: unknown } | undefined {
  if (!/^[[{]/.test(text)) return undefined;
  try {
    return { value: JSON.parse(text) };
  } catch {
    return undefined;
  }
}

function jsonMatches(expected: unknown, actual: unknown): boolean {
  if (expected === '...') return true;
  if (Array.isArray(expected)) {
    return Array.isArray(actual) && actual.length === expected.length && expected.every((item, i) => jsonMatches(item, actual[i]));
  }
  if (typeof expected === 'object' && expected !== null) {
    if (typeof actual !== 'object' || actual === null || Array.isArray(actual)) return false;
    const keys = Object.keys(expected);
    if (keys.length === 1 && keys[0] === '...') return true;
    const got = Object.keys(actual);
    return got.join('\0') === keys.join('\0') && keys.every((key) => jsonMatches((expected as Record<string, unknown>)[key], (actual as Record<string, unknown>)[key]));
  }
  return expected === actual;
}

function linesMatch(expected: string[], actual: string[]): boolean {
  if (expected.length === 0) return actual.length === 0;
  const [head, ...rest] = expected;
  if (head === '...') {
    for (let skip = 0; skip <= actual.length; skip++) if (linesMatch(rest, actual.slice(skip))) return true;
    return false;
  }
  return actual.length > 0 && actual[0] === head && linesMatch(rest, actual.slice(1));
}
