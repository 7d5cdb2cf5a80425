/** Describe: every mode by JSON and by INPUT_DESCRIBE, precedence, bad modes (docs/TWYLT.md section 1, step 4, and section 5). */
import { isDeepStrictEqual } from 'node:util';
import type { ToolSpec } from '../../client/types.js';
import { DESCRIBE_ENV, DESCRIBE_MODES, type DescribeMode } from '../../protocol/constants.js';
import { judge, payload, UNKNOWN_KEY, type CheckDef, type CheckGroup, type CheckRun } from '../check.js';
import { expectError, expectIssue, expectJsonOutput, issuesOf, preview, runProblems } from '../expect.js';
import type { Evidence } from '../types.js';

/** What each mode must print, derived from json_spec. */
function expected(spec: ToolSpec, mode: DescribeMode): unknown {
  switch (mode) {
    case 'brief':
      return `${spec.description}\n`;
    case 'schema':
      return { inputSchema: spec.inputSchema, outputSchema: spec.outputSchema };
    case 'requirements':
      return spec.requirements;
    case 'few_shots':
      return spec.few_shots;
    case 'json_spec':
      return spec;
  }
}

/** Problems of a describe run that should have printed `mode`. */
function describeProblems(t: CheckRun, run: Evidence, mode: DescribeMode): string[] {
  const want = expected(t.spec, mode);
  if (mode === 'brief') {
    const problems = runProblems(run);
    if (problems.length) return problems;
    if (run.received.exitCode !== 0) return [`exit code ${run.received.exitCode}, expected 0; stderr: ${preview(run.received.stderr)}`];
    return run.received.stdout === want ? [] : [`stdout is ${preview(run.received.stdout)}, expected the description and a newline: ${preview(want as string)}`];
  }
  const { problems, value } = expectJsonOutput(run);
  if (problems.length === 0 && !isDeepStrictEqual(value, want)) problems.push(`output differs from the ${mode} part of json_spec`);
  return problems;
}

function modeChecks(mode: DescribeMode): CheckDef[] {
  return [
    {
      id: `describe.${mode}.json`,
      title: `describe ${mode} via {"describe": "${mode}"}`,
      needs: ['spec'],
      async run(t) {
        const run = await t.probe({ args: [payload({ describe: mode })] });
        return judge(describeProblems(t, run, mode), 'as in json_spec');
      },
    },
    {
      id: `describe.${mode}.env`,
      title: `describe ${mode} via ${DESCRIBE_ENV}`,
      needs: ['spec'],
      async run(t) {
        const run = await t.probe({ env: { [DESCRIBE_ENV]: mode } });
        return judge(describeProblems(t, run, mode), 'as in json_spec');
      },
    },
  ];
}

/** A describe error must name the bad value and list the modes. */
function badModeProblems(run: Evidence, bad: string | undefined): string[] {
  const { problems, error } = expectError(run, 'describe');
  const text = error?.exception?.message ?? '';
  if (error && bad !== undefined && !text.includes(bad)) problems.push(`the message ${JSON.stringify(text)} does not name the bad value ${JSON.stringify(bad)}`);
  const missing = DESCRIBE_MODES.filter((mode) => !text.includes(mode));
  if (error && missing.length > 0) problems.push(`the message ${JSON.stringify(text)} does not list the modes ${missing.join(', ')}`);
  return problems;
}

const BAD_MODE = 'not_a_mode';

export const describeChecks: CheckGroup = () => [
  ...DESCRIBE_MODES.flatMap(modeChecks),
  {
    id: 'describe.stdin',
    title: 'describe json_spec via a stdin payload',
    needs: ['spec'],
    async run(t) {
      const run = await t.probe({ stdin: payload({ describe: 'json_spec' }) });
      return judge(describeProblems(t, run, 'json_spec'), 'as by CLI');
    },
  },
  {
    id: 'describe.precedence',
    title: `a describe key wins over ${DESCRIBE_ENV}`,
    needs: ['spec'],
    async run(t) {
      const run = await t.probe({ args: [payload({ describe: 'brief' })], env: { [DESCRIBE_ENV]: 'json_spec' } });
      return judge(describeProblems(t, run, 'brief'), 'the payload\'s mode was used');
    },
  },
  {
    id: 'describe.bad_mode.json',
    title: 'an unknown describe mode is a describe error (exit 4)',
    async run(t) {
      const run = await t.probe({ args: [payload({ describe: BAD_MODE })] });
      return judge(badModeProblems(run, BAD_MODE), 'rejected, naming the value and the modes');
    },
  },
  {
    id: 'describe.bad_mode.env',
    title: `an unknown ${DESCRIBE_ENV} mode is a describe error (exit 4)`,
    async run(t) {
      const run = await t.probe({ env: { [DESCRIBE_ENV]: BAD_MODE } });
      return judge(badModeProblems(run, BAD_MODE), 'rejected, naming the value and the modes');
    },
  },
  {
    id: 'describe.bad_mode.case',
    title: 'modes are case-sensitive and not trimmed',
    async run(t) {
      const problems: string[] = [];
      for (const bad of ['Brief', ' brief']) {
        const run = await t.probe({ args: [payload({ describe: bad })] });
        problems.push(...expectError(run, 'describe').problems.map((p) => `${JSON.stringify(bad)}: ${p}`));
      }
      return judge(problems, '"Brief" and " brief" rejected');
    },
  },
  {
    id: 'describe.bad_mode.type',
    title: 'a non-string describe value is a describe error (exit 4)',
    async run(t) {
      const problems: string[] = [];
      for (const bad of [1, ['brief']]) {
        const run = await t.probe({ args: [payload({ describe: bad })] });
        problems.push(...expectError(run, 'describe').problems.map((p) => `${JSON.stringify(bad)}: ${p}`));
      }
      return judge(problems, 'rejected');
    },
  },
  {
    id: 'describe.empty_ignored',
    title: 'describe null or "" is dropped and the input is validated',
    async run(t) {
      const problems: string[] = [];
      for (const empty of [null, '']) {
        const run = await t.probe({ args: [payload({ describe: empty, [UNKNOWN_KEY]: 1 })] });
        const verdict = expectError(run, 'inputInvalid');
        const issues = issuesOf(verdict.error);
        verdict.problems.push(...(verdict.error ? expectIssue(issues, UNKNOWN_KEY, ['unknown_field']) : []));
        if (issues.some((item) => item.path === 'describe')) verdict.problems.push('"describe" itself was reported');
        problems.push(...verdict.problems.map((p) => `describe ${JSON.stringify(empty)}: ${p}`));
      }
      return judge(problems, 'validated without the describe key');
    },
  },
];
