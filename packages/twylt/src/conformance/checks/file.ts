/** File mode: input.json in, output.json out, nothing stale left behind (docs/TWYLT.md section 1, step 6). */
import { FILE_INPUT, FILE_OUTPUT, ROOT_PATH } from '../../protocol/constants.js';
import { judge, payload, UNKNOWN_KEY, warn, type CheckGroup } from '../check.js';
import { expectError, expectIssue, issuesOf, preview, runProblems, toolSaid } from '../expect.js';
import type { Evidence } from '../types.js';

const STALE = '{"stale": true}';

function outputFile(run: Evidence): string | null | undefined {
  return run.received.files?.[FILE_OUTPUT];
}

/** A failure that must also leave no output.json behind. */
function failureProblems(run: Evidence, kind: 'inputInvalid' | 'transport'): { problems: string[]; issues: ReturnType<typeof issuesOf> } {
  const verdict = expectError(run, kind);
  if (outputFile(run) != null) verdict.problems.push(`${FILE_OUTPUT} exists after a failure: ${preview(outputFile(run)!)}`);
  return { problems: verdict.problems, issues: issuesOf(verdict.error) };
}

export const fileChecks: CheckGroup = () => [
  {
    id: 'file.success',
    title: `a valid ${FILE_INPUT} gives ${FILE_OUTPUT} (valid JSON, no trailing newline) and an empty stdout`,
    needs: ['schemas', 'base'],
    async run(t) {
      const run = await t.probe({ files: { [FILE_INPUT]: payload(t.base) }, read: [FILE_OUTPUT] });
      const problems = runProblems(run);
      if (problems.length) return judge(problems, '');
      const { exitCode, stdout, stderr } = run.received;
      if (exitCode === 5 || exitCode === 6) {
        return warn(`exit ${exitCode} on ${t.context.baseSource}; the environment may lack what the tool needs: ${toolSaid(stderr)}`);
      }
      if (exitCode !== 0) return judge([`exit code ${exitCode}, expected 0; stderr: ${preview(stderr)}`], '');
      if (stdout !== '') problems.push(`stdout must be empty in file mode, got ${preview(stdout)}`);
      const text = outputFile(run);
      if (text == null) return judge([...problems, `no ${FILE_OUTPUT} was written`], '');
      if (text.endsWith('\n')) problems.push(`${FILE_OUTPUT} must not end with a newline`);
      try {
        const issues = t.context.validateOutput!(JSON.parse(text));
        problems.push(...issues.map((item) => `${FILE_OUTPUT} does not match outputSchema: ${item.path || '/'} ${item.message}`));
      } catch {
        problems.push(`${FILE_OUTPUT} is not JSON: ${preview(text)}`);
      }
      return judge(problems, `${FILE_OUTPUT} written from ${t.context.baseSource}`);
    },
  },
  {
    id: 'file.stale_output_removed',
    title: `a failing run removes an existing ${FILE_OUTPUT}`,
    async run(t) {
      const run = await t.probe({ files: { [FILE_INPUT]: payload({ [UNKNOWN_KEY]: 1 }), [FILE_OUTPUT]: STALE }, read: [FILE_OUTPUT] });
      return judge(failureProblems(run, 'inputInvalid').problems, 'removed');
    },
  },
  {
    id: 'file.malformed',
    title: `a malformed ${FILE_INPUT} is a transport error (exit 4) and leaves no ${FILE_OUTPUT}`,
    async run(t) {
      const run = await t.probe({ files: { [FILE_INPUT]: '{not json', [FILE_OUTPUT]: STALE }, read: [FILE_OUTPUT] });
      return judge(failureProblems(run, 'transport').problems, 'rejected');
    },
  },
  {
    id: 'file.missing',
    title: `no payload and no ${FILE_INPUT} is a transport error (exit 4)`,
    async run(t) {
      const run = await t.probe({});
      return judge(expectError(run, 'transport').problems, 'rejected');
    },
  },
  {
    id: 'file.non_object',
    title: `a JSON non-object in ${FILE_INPUT} is one validation issue at ${ROOT_PATH} (model_type)`,
    async run(t) {
      const run = await t.probe({ files: { [FILE_INPUT]: '[1, 2]' }, read: [FILE_OUTPUT] });
      const { problems, issues } = failureProblems(run, 'inputInvalid');
      if (issues.length > 0) problems.push(...expectIssue(issues, ROOT_PATH, ['model_type']));
      if (issues.length > 1) problems.push(`expected exactly one issue, got ${issues.length}`);
      return judge(problems, 'rejected');
    },
  },
  {
    id: 'file.describe_is_unknown',
    title: `a describe key inside ${FILE_INPUT} is an unknown field, not a describe request`,
    async run(t) {
      const run = await t.probe({ files: { [FILE_INPUT]: payload({ describe: 'brief' }) }, read: [FILE_OUTPUT] });
      const { problems, issues } = failureProblems(run, 'inputInvalid');
      if (problems.length === 0) problems.push(...expectIssue(issues, 'describe', ['unknown_field'], { is: 'brief' }));
      return judge(problems, 'reported as unknown_field');
    },
  },
  {
    id: 'file.cli_untouched',
    title: `a CLI or stdin call never touches ${FILE_OUTPUT}`,
    async run(t) {
      const problems: string[] = [];
      for (const request of [{ args: [payload({ [UNKNOWN_KEY]: 1 })] }, { stdin: payload({ [UNKNOWN_KEY]: 1 }) }]) {
        const run = await t.probe({ ...request, files: { [FILE_OUTPUT]: STALE }, read: [FILE_OUTPUT] });
        const label = request.stdin ? 'stdin' : 'CLI';
        problems.push(...expectError(run, 'inputInvalid').problems.map((p) => `${label}: ${p}`));
        if (outputFile(run) !== STALE) problems.push(`${label}: ${FILE_OUTPUT} was changed to ${preview(outputFile(run) ?? '(deleted)')}`);
      }
      return judge(problems, `${FILE_OUTPUT} left as it was`);
    },
  },
];
