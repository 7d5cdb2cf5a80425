/** What a built tool must answer exactly as the unbuilt one: the cases, and how a run is observed. */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from '../support/process.js';

export const freshDir = () => mkdtempSync(join(tmpdir(), 'twylt-build-'));

export interface Case {
  args?: string[];
  input?: string | Buffer;
  env?: Record<string, string>;
  file?: string;
}

/** What a consumer can observe of one run: exit code, stdout, stderr, and output.json. */
export async function observe(command: string[], c: Case) {
  const cwd = freshDir();
  if (c.file !== undefined) writeFileSync(join(cwd, 'input.json'), c.file);
  const result = await run([...command, ...(c.args ?? [])], { input: c.input, env: c.env, cwd });
  const output = join(cwd, 'output.json');
  const observed = { code: result.code, stdout: result.stdout, stderr: result.stderr, outputJson: existsSync(output) ? readFileSync(output, 'utf8') : null };
  rmSync(cwd, { recursive: true, force: true });
  return observed;
}

export const MATRIX: Record<string, Case> = {
  'CLI success': { args: ['{"text": "héllo ✓"}'] },
  'stdin success': { input: '{"text": "piped"}' },
  'file mode success': { file: '{"text": "from a file"}' },
  'file mode, no input.json': {},
  'file mode, non-object input.json': { file: '[1, 2]' },
  'malformed CLI JSON': { args: ['{"text": '] },
  'malformed stdin JSON': { input: '{"text": ' },
  'stdin not an object': { input: '"text"' },
  'invalid UTF-8 on stdin': { input: Buffer.from([0x7b, 0xff, 0x7d]) },
  'missing field, unknown field, wrong type': { args: ['{"extra": 1}'] },
  'wrong type, human format': { args: ['{"text": 5}', '--error-format', 'human'] },
  'invalid error format': { args: ['{"text": "a"}', '--error-format=xml'] },
  '--help': { args: ['--help'] },
  '--version': { args: ['--version'] },
  '-v with stdin ignored': { args: ['-v'], input: 'not json' },
  'host argument before payload': { args: ['host-arg', '{"text": "ignored"}'], input: '{"text": "stdin wins"}' },
  'describe null is dropped': { args: ['{"text": "a", "describe": null}'] },
  'describe in input.json is a field': { file: '{"text": "a", "describe": "json_spec"}' },
  'unknown describe mode in the payload': { args: ['{"describe": "everything"}'] },
  'non-string describe mode': { input: '{"describe": 5}' },
  'unknown INPUT_DESCRIBE': { env: { INPUT_DESCRIBE: 'JSON_SPEC' } },
  'describe beats INPUT_DESCRIBE': { args: ['{"describe": "brief"}'], env: { INPUT_DESCRIBE: 'json_spec' } },
  'malformed JSON with INPUT_DESCRIBE': { args: ['{"describe": '], env: { INPUT_DESCRIBE: 'json_spec' } },
  ...Object.fromEntries(
    ['brief', 'schema', 'requirements', 'few_shots', 'json_spec'].flatMap((mode) => [
      [`describe ${mode} on the CLI`, { args: [`{"describe": "${mode}", "text": 1}`] }],
      [`describe ${mode} on stdin`, { input: `{"describe": "${mode}"}` }],
      [`describe ${mode} through INPUT_DESCRIBE`, { env: { INPUT_DESCRIBE: mode } }],
    ]),
  ),
};

/** The quick start's calls every runtime and every built form must answer alike (issue 21). */
export const QUICK_START_CALLS = [
  'CLI success',
  'stdin success',
  'file mode success',
  'file mode, no input.json',
  'missing field, unknown field, wrong type',
  'wrong type, human format',
] as const;

/** The cases of MATRIX with these names. */
export function casesNamed(names: readonly string[]): Record<string, Case> {
  return Object.fromEntries(names.map((name) => [name, MATRIX[name]!]));
}
