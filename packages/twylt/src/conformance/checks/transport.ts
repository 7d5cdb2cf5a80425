/** Transports: how the payload is found and what makes it unreadable (docs/TWYLT.md section 1, step 3). */
import { DESCRIBE_ENV, FILE_INPUT } from '../../protocol/constants.js';
import { judge, payload, UNKNOWN_KEY, type CheckGroup } from '../check.js';
import { expectError, expectIssue, issuesOf, preview, runProblems } from '../expect.js';
import type { Evidence } from '../types.js';

function briefProblems(run: Evidence, description: string): string[] {
  const problems = runProblems(run);
  if (problems.length) return problems;
  if (run.received.exitCode !== 0) return [`exit code ${run.received.exitCode}, expected 0; stderr: ${preview(run.received.stderr)}`];
  return run.received.stdout === `${description}\n` ? [] : [`stdout is ${preview(run.received.stdout)}, expected the brief description`];
}

export const transportChecks: CheckGroup = () => [
  {
    id: 'transport.cli_malformed',
    title: 'malformed JSON as the CLI payload is a transport error (exit 4)',
    async run(t) {
      const run = await t.probe({ args: ['{not json'] });
      return judge(expectError(run, 'transport').problems, 'rejected');
    },
  },
  {
    id: 'transport.stdin_malformed',
    title: 'malformed JSON on stdin is a transport error (exit 4)',
    async run(t) {
      const run = await t.probe({ stdin: '{not json' });
      return judge(expectError(run, 'transport').problems, 'rejected');
    },
  },
  {
    id: 'transport.stdin_non_object',
    title: 'a JSON non-object on stdin is a transport error (exit 4)',
    async run(t) {
      const problems: string[] = [];
      for (const stdin of ['[1, 2]', '42']) {
        const run = await t.probe({ stdin });
        problems.push(...expectError(run, 'transport').problems.map((p) => `${stdin}: ${p}`));
      }
      return judge(problems, 'rejected');
    },
  },
  {
    id: 'transport.before_describe',
    title: `unreadable input is a transport error even with ${DESCRIBE_ENV} set`,
    async run(t) {
      const problems: string[] = [];
      for (const request of [{ args: ['{not json'] }, { stdin: '{not json' }]) {
        const run = await t.probe({ ...request, env: { [DESCRIBE_ENV]: 'brief' } });
        problems.push(...expectError(run, 'transport').problems.map((p) => `${request.args ? 'CLI' : 'stdin'}: ${p}`));
      }
      return judge(problems, 'the transport was read first');
    },
  },
  {
    id: 'transport.cli_whitespace',
    title: 'a CLI payload may start with whitespace',
    needs: ['spec'],
    async run(t) {
      const run = await t.probe({ args: [` \n\t${payload({ describe: 'brief' })}`] });
      return judge(briefProblems(run, t.spec.description), 'recognised as the payload');
    },
  },
  {
    id: 'transport.foreign_args',
    title: 'a first argument not starting with "{" is ignored with all that follow; stdin is read',
    needs: ['spec'],
    async run(t) {
      const run = await t.probe({ args: ['wrapper-argument', payload({ describe: 'not_a_mode' })], stdin: payload({ describe: 'brief' }) });
      return judge(briefProblems(run, t.spec.description), 'arguments ignored, stdin used');
    },
  },
  {
    id: 'transport.stdin_blank',
    title: `blank stdin falls through to file mode (${FILE_INPUT})`,
    async run(t) {
      const run = await t.probe({ stdin: ' \n\t ', files: { [FILE_INPUT]: payload({ [UNKNOWN_KEY]: 1 }) } });
      const verdict = expectError(run, 'inputInvalid');
      if (verdict.error) verdict.problems.push(...expectIssue(issuesOf(verdict.error), UNKNOWN_KEY, ['unknown_field']));
      return judge(verdict.problems, `${FILE_INPUT} was read`);
    },
  },
];
