/**
 * Run the conformance suite against one executable: json_spec first (what it learns
 * shapes the rest), then every other check, runs limited to a few at a time.
 */
import { isAbsolute, relative } from 'node:path';
import { resolveCommand } from '../client/command.js';
import { DEFAULT_MAX_OUTPUT_BYTES } from '../client/process.js';
import { describeChecks } from './checks/describe.js';
import { fewShotChecks } from './checks/few-shots.js';
import { fileChecks } from './checks/file.js';
import { inputChecks } from './checks/input.js';
import { schemaChecks } from './checks/schema.js';
import { serviceChecks } from './checks/service.js';
import { specCheck } from './checks/spec.js';
import { transportChecks } from './checks/transport.js';
import { CheckRun, skip, type CheckDef, type CheckGroup, type SuiteContext, type Verdict } from './check.js';
import { createProber, runDirectory, trimEvidence, type Prober } from './probe.js';
import { startFailure } from './start.js';
import { CHECK_DEFAULTS, type CheckResult, type CheckStatus, type ConformanceOptions, type ConformanceReport } from './types.js';

/** The check groups, in report order. */
export const CHECK_GROUPS: readonly CheckGroup[] = [describeChecks, serviceChecks, transportChecks, schemaChecks, inputChecks, fileChecks, fewShotChecks];

const NEEDS_MESSAGES = {
  spec: 'needs a readable json_spec (see check json_spec)',
  schemas: 'needs inputSchema and outputSchema that compile (see check schema.valid)',
  base: 'needs an input the inputSchema accepts: no few-shot input matched and none could be generated',
} as const;

export async function checkTool(command: readonly string[], options: ConformanceOptions = {}): Promise<ConformanceReport> {
  if (command.length === 0) throw new TypeError('checkTool needs a command: a non-empty argv array');
  const started = performance.now();
  const cwd = options.cwd ?? process.cwd();
  // Every run has its own working directory: relative script paths must not depend on it.
  const resolved = options.resolvePaths === false ? [...command] : resolveCommand(command, cwd);
  const runs = await runDirectory(cwd, options.tmpRoot);
  try {
    const prober = createProber(
      {
        command: resolved,
        timeoutMs: options.timeoutMs ?? CHECK_DEFAULTS.timeoutMs,
        maxOutputBytes: options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES,
        tmpRoot: runs.directory,
        env: options.env ?? {},
        signal: options.signal,
        sandbox: options.sandbox,
      },
      Math.max(1, options.concurrency ?? CHECK_DEFAULTS.concurrency),
    );
    const context: SuiteContext = {};
    const selected = (check: CheckDef) => !options.only || check.id === specCheck.id || options.only.some((prefix) => check.id.startsWith(prefix));

    const first = await runCheck(specCheck, context, prober);
    const results: CheckResult[] = [first];
    // A confirming run belongs to json_spec's evidence.
    const notStarted = await startFailure(resolved, first.evidence[0]!, async (request) => {
      const run = await prober(request);
      first.evidence.push(trimEvidence(run));
      return run;
    });
    if (notStarted) {
      first.status = 'fail';
      first.message = notStarted + outsideHint(runs.directory, cwd);
    } else {
      const checks = CHECK_GROUPS.flatMap((group) => group(context)).filter(selected);
      const total = checks.length + 1;
      options.onCheck?.(first.id, 1, total);
      let finished = 1;
      const ended = (result: CheckResult) => {
        options.onCheck?.(result.id, ++finished, total);
        return result;
      };
      results.push(...(await Promise.all(checks.map((check) => runCheck(check, context, prober).then(ended)))));
    }

    const summary: Record<CheckStatus, number> = { pass: 0, fail: 0, warn: 0, skip: 0 };
    for (const result of results) summary[result.status]++;
    return {
      command: resolved,
      ...(context.spec ? { tool: { name: context.spec.name, version: context.spec.version } } : {}),
      runDirectory: runs.directory,
      ...(notStarted ? { startFailure: first.message } : {}),
      results,
      summary,
      ok: summary.fail === 0,
      durationMs: Math.round(performance.now() - started),
    };
  } finally {
    await runs.remove();
  }
}

/** Runs made outside the user's directory may be why a command found nothing: say so. */
function outsideHint(directory: string, cwd: string): string {
  const inside = relative(cwd, directory);
  if (inside !== '' && !inside.startsWith('..') && !isAbsolute(inside)) return '';
  return ` (the runs were made in ${directory}, outside ${cwd}: a command that finds its project from its working directory, such as npx or node --import, finds nothing there)`;
}

async function runCheck(check: CheckDef, context: SuiteContext, prober: Prober): Promise<CheckResult> {
  const t = new CheckRun(context, prober);
  let verdict: Verdict;
  const missing = (check.needs ?? []).find((need) => !has(context, need));
  if (missing) {
    verdict = skip(NEEDS_MESSAGES[missing]);
  } else {
    try {
      verdict = await check.run(t);
    } catch (error) {
      verdict = { status: 'fail', message: `the check could not complete: ${(error as Error).message}` };
    }
  }
  return { id: check.id, title: check.title, ...verdict, evidence: t.evidence.map(trimEvidence) };
}

function has(context: SuiteContext, need: 'spec' | 'schemas' | 'base'): boolean {
  if (need === 'spec') return context.spec !== undefined;
  if (need === 'schemas') return context.validateInput !== undefined && context.validateOutput !== undefined;
  return context.base !== undefined;
}
