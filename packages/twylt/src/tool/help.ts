/** The `--help` text. Wording is ours; the first line is `<name> <version>` (docs/TWYLT.md section 1). */
import { DEFAULT_MAX_INPUT_BYTES, DEFAULTS, DESCRIBE_ENV, DESCRIBE_KEY, DESCRIBE_MODES, ENV, FILE_INPUT, FILE_OUTPUT } from '../protocol/constants.js';
import type { ToolDefinition } from './definition.js';

export function helpText(tool: ToolDefinition): string {
  const name = tool.name ?? DEFAULTS.name;
  const lines = [`${name} ${tool.version ?? DEFAULTS.version}`];
  if (tool.description) lines.push('', tool.description);
  lines.push(
    '',
    'Usage (a TWYLT 1.8 tool: JSON in, JSON out):',
    `  ${name} '{"field": "value"}'     input as the first argument`,
    `  echo '{...}' | ${name}           input on stdin`,
    `  ${name}                          file mode: reads ./${FILE_INPUT}, writes ./${FILE_OUTPUT}`,
    '',
    'Describe the tool instead of running it:',
    `  ${name} '{"${DESCRIBE_KEY}": "json_spec"}'`,
    `  ${DESCRIBE_ENV}=json_spec ${name}`,
    `  modes: ${DESCRIBE_MODES.join(', ')}`,
    '',
    'Options:',
    '  -h, --help               this text',
    '  --version                name and version',
    '  -v                       version only',
    '  --error-format json|human  how errors are written to stderr (default json)',
    '  --debug                  add a stack trace to errors',
    '',
    'Environment:',
    `  ${ENV.errorFormat[0]}=json|human, ${ENV.debug[0]}=1   as the options above`,
    `  ${ENV.maxInputBytes[0]}=N   the largest input read, in bytes (default ${DEFAULT_MAX_INPUT_BYTES})`,
    '',
    'Exit codes: 0 ok, 2 invalid input, 3 invalid output, 4 protocol error, 5 tool failed, 6 guardrails denied.',
  );
  return `${lines.join('\n')}\n`;
}
