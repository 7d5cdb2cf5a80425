/** Service options and the option scan (docs/TWYLT.md section 1, steps 1 and 2). */
import { DESCRIBE_ENV, ENV } from '../../protocol/constants.js';
import { ISSUE_MESSAGES } from '../../protocol/issues.js';
import { judge, payload, UNKNOWN_KEY, type CheckDef, type CheckGroup } from '../check.js';
import { expectError, preview, runProblems } from '../expect.js';
import type { ProbeRequest } from '../probe.js';
import type { Evidence } from '../types.js';

function printed(run: Evidence, want: (stdout: string) => string | undefined): string[] {
  const problems = runProblems(run);
  if (problems.length) return problems;
  if (run.received.exitCode !== 0) return [`exit code ${run.received.exitCode}, expected 0; stderr: ${preview(run.received.stderr)}`];
  const problem = want(run.received.stdout);
  return problem ? [problem] : [];
}

function helpCheck(id: string, flag: string): CheckDef {
  return {
    id,
    title: `${flag} prints help starting with "<name> <version>" and reads nothing else`,
    needs: ['spec'],
    async run(t) {
      const head = `${t.spec.name} ${t.spec.version}`;
      // Malformed stdin and a describe request must both be ignored.
      const run = await t.probe({ args: [flag], stdin: '{not json', env: { [DESCRIBE_ENV]: 'json_spec' } });
      return judge(
        printed(run, (out) => (out.split('\n', 1)[0] === head ? undefined : `first line is ${preview(out.split('\n', 1)[0] ?? '')}, expected ${preview(head)}`)),
        'help printed',
      );
    },
  };
}

/** Problems of a human-format validation error for a payload with one unknown field. */
function humanProblems(run: Evidence): string[] {
  const problems = runProblems(run);
  if (problems.length) return problems;
  const { exitCode, stdout, stderr } = run.received;
  if (exitCode !== 2) problems.push(`exit code ${exitCode}, expected 2`);
  if (stdout !== '') problems.push(`stdout must be empty on failure, got ${preview(stdout)}`);
  const bullets = stderr.match(/^ {2}• /gm)?.length ?? 0;
  if (!stderr.startsWith('Input validation failed\n\n')) problems.push(`stderr should start with "Input validation failed" and a blank line, got ${preview(stderr)}`);
  if (!stderr.includes(`  • ${UNKNOWN_KEY}\n    ${ISSUE_MESSAGES.unknown_field}\n\n`)) problems.push(`stderr lacks the item "  • ${UNKNOWN_KEY}\\n    ${ISSUE_MESSAGES.unknown_field}"`);
  if (!stderr.endsWith(`${bullets} validation error${bullets === 1 ? '' : 's'}\n`)) problems.push(`stderr should end with "${bullets} validation error${bullets === 1 ? '' : 's'}"`);
  return problems;
}

const badInput = payload({ [UNKNOWN_KEY]: 1 });

export const serviceChecks: CheckGroup = () => [
  helpCheck('service.help', '--help'),
  helpCheck('service.help_short', '-h'),
  {
    id: 'service.version',
    title: '--version prints "<name> <version>"',
    needs: ['spec'],
    async run(t) {
      const want = `${t.spec.name} ${t.spec.version}\n`;
      const run = await t.probe({ args: ['--version'] });
      return judge(printed(run, (out) => (out === want ? undefined : `stdout is ${preview(out)}, expected ${preview(want)}`)), 'as expected');
    },
  },
  {
    id: 'service.version_short',
    title: '-v prints "<version>"',
    needs: ['spec'],
    async run(t) {
      const want = `${t.spec.version}\n`;
      const run = await t.probe({ args: ['-v'] });
      return judge(printed(run, (out) => (out === want ? undefined : `stdout is ${preview(out)}, expected ${preview(want)}`)), 'as expected');
    },
  },
  {
    id: 'options.scan',
    title: '--debug and --error-format are removed wherever they stand',
    needs: ['spec'],
    async run(t) {
      const want = `${t.spec.name} ${t.spec.version}\n`;
      const problems: string[] = [];
      for (const args of [['--debug', '--error-format', 'json', '--version'], ['--error-format=json', '--version', '--debug']]) {
        const run = await t.probe({ args });
        problems.push(...printed(run, (out) => (out === want ? undefined : `${args.join(' ')}: stdout is ${preview(out)}, expected ${preview(want)}`)));
      }
      return judge(problems, 'the service option was found after them');
    },
  },
  {
    id: 'options.error_format_human',
    title: '--error-format human renders validation errors as text',
    async run(t) {
      const run = await t.probe({ args: ['--error-format', 'human', badInput] });
      return judge(humanProblems(run), 'human text as specified');
    },
  },
  {
    id: 'options.error_format_env',
    title: `${ENV.errorFormat[0]} (trimmed, any case) selects the format`,
    async run(t) {
      const run = await t.probe({ args: [badInput], env: { [ENV.errorFormat[0]]: ' Human ' } });
      return judge(humanProblems(run), 'human text as specified');
    },
  },
  {
    id: 'options.error_format_last',
    title: 'the last --error-format wins',
    async run(t) {
      const run = await t.probe({ args: ['--error-format', 'human', '--error-format=json', badInput] });
      return judge(expectError(run, 'inputInvalid').problems, 'JSON error');
    },
  },
  {
    id: 'options.debug',
    title: `--debug and ${ENV.debug[0]} add a traceback as the last key`,
    async run(t) {
      const problems: string[] = [];
      const requests: Array<[string, ProbeRequest]> = [
        ['--debug', { args: ['--debug', '{not json'] }],
        [`${ENV.debug[0]}=TRUE`, { args: ['{not json'], env: { [ENV.debug[0]]: 'TRUE' } }],
      ];
      for (const [label, request] of requests) {
        const run = await t.probe(request);
        const verdict = expectError(run, 'transport');
        const keys = verdict.error ? Object.keys(verdict.error) : [];
        if (verdict.error && (keys.at(-1) !== 'traceback' || typeof verdict.error.traceback !== 'string')) {
          verdict.problems.push('no "traceback" string as the last key');
        }
        problems.push(...verdict.problems.map((p) => `${label}: ${p}`));
      }
      return judge(problems, 'traceback present');
    },
  },
];
