/**
 * Exit 6, a guardrails denial, through the client and `twylt call` (issue 17): the real
 * runtime denies a tool that reads a business path while no workspace root is configured.
 */
import { describe, expect, it } from 'vitest';
import { ToolError, TwyltClient } from '../../packages/twylt/src/client/index.js';
import { describeFailure } from '../../packages/twylt/src/toolset/index.js';
import { guardrailsEnv, probe } from '../guardrails/probe.js';
import { runTwylt } from '../support/twylt-cli.js';

const ENV = guardrailsEnv({ TWYLT_GUARDRAILS: '1', TWYLT_ERROR_FORMAT: 'json' });
const READ = { op: 'read', path: '/file.txt' };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('a guardrails denial (exit 6)', () => {
  it('is a ToolError with exit 6, stage guardrails and the parsed error object, code and incident id', async () => {
    const error = await new TwyltClient(probe, { env: ENV }).call(READ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ToolError);
    const denied = error as ToolError;
    expect([denied.exitCode, denied.stage, denied.stdout]).toEqual([6, 'guardrails', '']);
    expect(denied.error).toMatchObject({ type: 'guardrails_error', source: 'twylt', stage: 'guardrails', message: 'Policy denied', code: 'workspace_not_configured' });
    expect(denied.error!.incident_id).toMatch(UUID);
    expect(denied.message).toBe(`Policy denied: WorkspaceDenied: workspace_not_configured: denied by the workspace policy (incident ${denied.error!.incident_id}) (exit 6, stage guardrails)`);
    // The incident line before the error object stays in stderr.
    expect(JSON.parse(denied.stderr.split('\n')[0]!)).toMatchObject({ event: 'workspace_incident', action: 'deny', code: 'workspace_not_configured' });
    expect(describeFailure('workspace_probe', denied)).toEqual({
      kind: 'denied',
      message: `"workspace_probe" was denied by its guardrails policy (workspace_not_configured): WorkspaceDenied: workspace_not_configured: denied by the workspace policy (incident ${denied.error!.incident_id})`,
    });
  });

  it('twylt call exits 6 and says so readably, or passes the tool stderr through with --json', async () => {
    const env = ENV as Record<string, string>;
    const human = await runTwylt(['call', '--input', JSON.stringify(READ), '--', ...probe], { env });
    expect([human.code, human.stdout]).toEqual([6, '']);
    expect(human.stderr).toMatch(/^ToolError: Policy denied: WorkspaceDenied: workspace_not_configured: denied by the workspace policy \(incident [0-9a-f-]{36}\) \(exit 6, stage guardrails\)\n$/);

    const json = await runTwylt(['call', '--json', '--input', JSON.stringify(READ), '--', ...probe], { env });
    expect([json.code, json.stdout]).toEqual([6, '']);
    const [incident, last, rest] = json.stderr.split('\n');
    expect(JSON.parse(incident!)).toMatchObject({ event: 'workspace_incident', code: 'workspace_not_configured' });
    expect(JSON.parse(last!).error).toMatchObject({ type: 'guardrails_error', stage: 'guardrails', code: 'workspace_not_configured' });
    expect(rest).toBe('');
  });
});
