/** Reports as text: a table for people, JUnit XML for CI. (JSON is the report object itself.) */
import type { CheckStatus, ConformanceReport, Evidence } from './types.js';

export interface TableOptions {
  /** ANSI colours (the CLI decides: only on a TTY, never with NO_COLOR). */
  color?: boolean;
  /** Show the evidence of failed and warned checks (default true). */
  evidence?: boolean;
}

const COLORS: Record<CheckStatus, string> = { pass: '32', fail: '31', warn: '33', skip: '90' };

export function renderTable(report: ConformanceReport, options: TableOptions = {}): string {
  const paint = (status: CheckStatus, text: string) => (options.color ? `\x1b[${COLORS[status]}m${text}\x1b[39m` : text);
  const width = Math.max(...report.results.map((result) => result.id.length));
  const lines = [
    `twylt check: ${report.tool ? `${report.tool.name} ${report.tool.version}` : '(no readable json_spec)'} (${report.command.join(' ')})`,
    `each run in a fresh, empty directory inside ${report.runDirectory} (file-mode checks put input.json there; removed afterwards)`,
    '',
  ];
  for (const result of report.results) {
    lines.push(`${paint(result.status, result.status.toUpperCase().padEnd(4))}  ${result.id.padEnd(width)}  ${result.message}`);
    if ((options.evidence ?? true) && (result.status === 'fail' || result.status === 'warn')) {
      for (const run of result.evidence) lines.push(...evidenceLines(run).map((line) => `      ${line}`));
    }
  }
  const { pass, fail, warn, skip } = report.summary;
  lines.push('', `${pass} passed, ${fail} failed, ${warn} warnings, ${skip} skipped in ${(report.durationMs / 1000).toFixed(1)} s`);
  return `${lines.join('\n')}\n`;
}

function evidenceLines(run: Evidence): string[] {
  const sent = run.sent;
  const parts = [`sent: args ${JSON.stringify(sent.args)}`];
  if (sent.stdin !== undefined) parts.push(`stdin ${JSON.stringify(sent.stdin)}`);
  if (sent.env) parts.push(`env ${JSON.stringify(sent.env)}`);
  if (sent.files) parts.push(`files ${JSON.stringify(sent.files)}`);
  const got = run.received;
  const outcome = got.failure ?? (got.signal ? `signal ${got.signal}` : `exit ${got.exitCode}`);
  const lines = [parts.join(', '), `got: ${outcome}`];
  if (got.stdout) lines.push(`stdout: ${clip(got.stdout)}`);
  if (got.stderr) lines.push(`stderr: ${clip(got.stderr)}`);
  if (got.files) lines.push(`files: ${JSON.stringify(got.files)}`);
  return lines;
}

function clip(text: string): string {
  const flat = JSON.stringify(text);
  return flat.length > 300 ? `${flat.slice(0, 300)}…` : flat;
}

export function renderJunit(report: ConformanceReport): string {
  const name = report.tool ? `${report.tool.name} ${report.tool.version}` : report.command.join(' ');
  const { fail, skip } = report.summary;
  const cases = report.results.map((result) => {
    const open = `    <testcase classname="twylt.check.${xml(result.id.split('.')[0]!)}" name="${xml(result.id)}">`;
    const details = xml(result.evidence.flatMap(evidenceLines).join('\n'));
    if (result.status === 'fail') return `${open}\n      <failure message="${xml(result.message)}">${details}</failure>\n    </testcase>`;
    if (result.status === 'skip') return `${open}\n      <skipped message="${xml(result.message)}"/>\n    </testcase>`;
    if (result.status === 'warn') return `${open}\n      <system-out>WARNING: ${xml(result.message)}\n${details}</system-out>\n    </testcase>`;
    return `${open}</testcase>`;
  });
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="twylt check" tests="${report.results.length}" failures="${fail}" skipped="${skip}" time="${report.durationMs / 1000}">`,
    `  <testsuite name="${xml(name)}" tests="${report.results.length}" failures="${fail}" errors="0" skipped="${skip}" time="${report.durationMs / 1000}">`,
    ...cases,
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}

const XML_ENTITIES: Record<string, string> = { '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' };

function xml(text: string): string {
  // Characters XML 1.0 cannot hold at all are dropped; the markup ones escaped.
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, '').replace(/[<>&"']/g, (c) => XML_ENTITIES[c]!);
}
