/**
 * `twylt check` (the built command) against the hand-written Python tool and each of its
 * deliberately broken variants: it must pass the one and fail each other, naming the check.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ConformanceReport } from '../../packages/twylt/src/conformance/index.js';
import { NO_PYTHON_REASON, noPython, pythonTool } from '../support/python.js';
import { checkReport, runTwylt } from '../support/twylt-cli.js';

const scratch = mkdtempSync(join(tmpdir(), 'twylt-check-test-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const check = (command: string[], extra: string[] = []) => checkReport(command, extra);

function status(report: ConformanceReport, id: string): string | undefined {
  return report.results.find((result) => result.id === id)?.status;
}

function failed(report: ConformanceReport): string[] {
  return report.results.filter((result) => result.status === 'fail').map((result) => result.id);
}

describe.skipIf(noPython)(`the foreign Python tool (${noPython ? NO_PYTHON_REASON : 'python3 found'})`, () => {
  it('passes every check', async () => {
    const junit = join(scratch, 'python.xml');
    const { code, report } = await check(pythonTool(), ['--junit', junit]);
    expect(failed(report)).toEqual([]);
    expect(code).toBe(0);
    expect(report.ok).toBe(true);
    expect(report.tool).toEqual({ name: 'py_echo', version: '1.2.0' });
    // The suite really covered the protocol: only the checks of maps and free-form values, which
    // this contract does not have, are skipped (the shapes tool below has them).
    expect(report.results.filter((result) => result.status === 'skip').map((result) => result.id)).toEqual(['input.map_entry', 'input.free_form']);
    for (const id of ['json_spec', 'describe.schema.env', 'describe.bad_mode.json', 'service.version', 'transport.stdin_malformed', 'schema.closed',
      'input.unknown_field.nested', 'input.required', 'input.wrong_type', 'input.constraint.times.maximum', 'file.stale_output_removed', 'few_shots.1.run']) {
      expect(status(report, id), id).toBe('pass');
    }
    // Evidence says what was sent and what came back.
    const evidence = report.results.find((result) => result.id === 'transport.cli_malformed')!.evidence[0]!;
    expect(evidence.sent.args).toEqual(['{not json']);
    expect(evidence.received.exitCode).toBe(4);
    expect(JSON.parse(evidence.received.stderr).error.stage).toBe('transport');
    const xml = readFileSync(junit, 'utf8');
    expect(xml).toContain(`tests="${report.results.length}" failures="0"`);
    expect(xml.match(/<testcase /g)).toHaveLength(report.results.length);
  });

  it('passes every check on a tool with a map, a free-form object in anyOf with null, list[Any], Any and an Optional model, as the reference publishes them', async () => {
    const { code, report } = await check(pythonTool('shapes'));
    expect(failed(report)).toEqual([]);
    expect(code).toBe(0);
    expect(report.tool).toEqual({ name: 'py_shapes', version: '1.0.0' });
    expect(report.summary.skip).toBe(0);
    const message = (id: string) => report.results.find((r) => r.id === id)?.message;
    expect(message('schema.closed')).toBe('closed on input and output');
    expect(message('input.wrong_type')).toBe('checked name, headers, items, meta, inner');
    expect(message('input.unknown_field.nested')).toBe('rejected at inner.__twylt_check_unknown__');
    expect(message('input.required.nested')).toBe('reported at inner.a');
    expect(message('input.map_entry')).toBe('null entries reported at headers.__twylt_check_unknown__');
    expect(message('input.free_form')).toBe('accepted in meta, items, extra');
    // What was sent: dict_type is demanded at the map and the optional free-form object, model_type at the optional model.
    const evidence = report.results.find((r) => r.id === 'input.wrong_type')!.evidence;
    expect(evidence.map((run) => JSON.parse(run.sent.args[0]!))).toEqual([
      { name: null, headers: null, items: null },
      { name: {}, headers: [], items: {}, meta: [], inner: [] },
    ]);
  });

  /** Each broken variant, and checks that must fail on it (by name). */
  const BROKEN: Record<string, { fails: string[]; because: RegExp }> = {
    wrong_exit: { fails: ['transport.cli_malformed', 'input.unknown_field', 'file.missing'], because: /exit code 1, expected/ },
    open_contract: { fails: ['schema.closed', 'input.unknown_field'], because: /open object|exit code 0, expected 2/ },
    garbage_stdout: { fails: ['json_spec'], because: /stdout is not one JSON document/ },
    bad_error_object: { fails: ['transport.cli_malformed', 'input.required'], because: /error keys are in the order message, type/ },
    stdout_on_error: { fails: ['transport.cli_malformed', 'input.required'], because: /stdout must be empty on failure/ },
    no_describe_env: { fails: ['describe.brief.env', 'describe.json_spec.env', 'describe.bad_mode.env'], because: /exit code 4, expected 0|stage/ },
    stale_output: { fails: ['file.stale_output_removed', 'file.malformed'], because: /output\.json exists after a failure/ },
    bad_few_shot: { fails: ['few_shots.valid', 'few_shots.2.run'], because: /few_shots\[2\]\.input|exit code 2, expected 0/ },
    wrong_format_version: { fails: ['json_spec'], because: /format_version is "1\.7"/ },
    // The shapes tool's variants (tests/fixtures/python/shapes_tool.py).
    map_as_model: { fails: ['input.wrong_type'], because: /expected an issue at headers with code dict_type; at headers it reported model_type/ },
    optional_model_open: { fails: ['input.unknown_field.nested'], because: /exit code 0, expected 2/ },
    free_form_closed: { fails: ['input.free_form'], because: /the tool's validation rejected them: meta\.__twylt_check_unknown__ unknown_field/ },
    map_entries_unchecked: { fails: ['input.map_entry'], because: /exit code 0, expected 2/ },
    open_model_in_optional: { fails: ['schema.closed'], because: /inputSchema\/\$defs\/Inner is an open object/ },
  };

  for (const [variant, { fails, because }] of Object.entries(BROKEN)) {
    it(`fails on the broken variant "${variant}", naming ${fails.join(', ')}`, async () => {
      const { code, report } = await check(pythonTool(variant));
      expect(code).toBe(1);
      expect(report.ok).toBe(false);
      for (const id of fails) {
        const result = report.results.find((r) => r.id === id);
        expect(result?.status, `${id}: ${result?.message}`).toBe('fail');
        expect(result!.message).toMatch(because);
      }
    });
  }

  it('fails on a tool that hangs, naming the runs that timed out', async () => {
    const { code, report } = await check(pythonTool('hang'), ['--timeout', '2000']);
    expect(code).toBe(1);
    expect(failed(report).sort()).toEqual(['few_shots.0.run', 'few_shots.1.run', 'file.success']);
    expect(report.results.find((r) => r.id === 'few_shots.0.run')!.message).toMatch(/did not finish within 2000 ms/);
  });

  it('warns, showing the tool\'s error, when a few-shot fails for its environment', async () => {
    const { code, report } = await check(pythonTool('few_shot_env'));
    expect(failed(report)).toEqual([]);
    expect(code).toBe(0);
    const result = report.results.find((r) => r.id === 'few_shots.2.run')!;
    expect(result.status).toBe('warn');
    expect(result.message).toMatch(/exit 5/);
    expect(result.message).toContain('FileNotFoundError');
  });

  it('prints a readable table, and exits 1 when a check fails', async () => {
    const run = await runTwylt(['check', '--', ...pythonTool('stale_output')]);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^FAIL {2}file\.stale_output_removed +output\.json exists after a failure/m);
    expect(run.stdout).toMatch(/^PASS {2}json_spec /m);
    expect(run.stdout).toMatch(/sent: args \[\], files \{"input\.json":/);
    expect(run.stdout).toMatch(/\d+ passed, 2 failed, 0 warnings, 2 skipped/);
    expect(run.stdout).not.toMatch(/\x1b\[/);
  });
});

