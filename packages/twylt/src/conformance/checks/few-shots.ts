/**
 * The tool's own examples: valid against its schemas, and each one run. A run that fails
 * in business code (exit 5) or by policy (exit 6) may be the environment (a missing file,
 * no network): a warning with the tool's error. A run its own validation rejects: a failure.
 */
import { judge, payload, skip, warn, type CheckDef, type CheckGroup } from '../check.js';
import { expectJsonOutput, runProblems, toolSaid } from '../expect.js';

export const fewShotChecks: CheckGroup = (context) => {
  const shots = context.spec?.few_shots ?? [];
  const checks: CheckDef[] = [
    {
      id: 'few_shots.valid',
      title: 'every few-shot input and output matches the published schemas',
      needs: ['schemas'],
      async run(t) {
        if (shots.length === 0) return skip('the tool publishes no few-shots');
        const problems = shots.flatMap((shot, i) => [
          ...t.context.validateInput!(shot.input).map((item) => `few_shots[${i}].input ${item.path || '/'} ${item.message}`),
          ...t.context.validateOutput!(shot.output).map((item) => `few_shots[${i}].output ${item.path || '/'} ${item.message}`),
        ]);
        return judge(problems, `${shots.length} example(s) match`);
      },
    },
  ];
  shots.forEach((shot, i) => {
    checks.push({
      id: `few_shots.${i}.run`,
      title: `few_shots[${i}] runs and its output matches outputSchema`,
      needs: ['schemas'],
      async run(t) {
        const run = await t.probe({ args: [payload(shot.input)] });
        const { exitCode, stderr } = run.received;
        if (runProblems(run).length === 0 && (exitCode === 5 || exitCode === 6)) {
          return warn(`exit ${exitCode}: the environment may lack what this example needs; the tool said ${toolSaid(stderr)}`);
        }
        const { problems, value } = expectJsonOutput(run);
        if (problems.length === 0) {
          problems.push(...t.context.validateOutput!(value).map((item) => `output does not match outputSchema: ${item.path || '/'} ${item.message}`));
        }
        return judge(problems, 'output matches outputSchema');
      },
    });
  });
  return checks;
};
