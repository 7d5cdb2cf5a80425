/** Wire constants of TWYLT 1.8. Everything a consumer can observe is named here once. */

export const FORMAT_VERSION = '1.8';

/** The describe modes, exactly as spelled on the wire (case-sensitive, never trimmed). */
export const DESCRIBE_MODES = ['brief', 'schema', 'requirements', 'few_shots', 'json_spec'] as const;
export type DescribeMode = (typeof DESCRIBE_MODES)[number];

export function isDescribeMode(value: unknown): value is DescribeMode {
  return typeof value === 'string' && (DESCRIBE_MODES as readonly string[]).includes(value);
}

export const EXIT = {
  ok: 0,
  inputInvalid: 2,
  outputInvalid: 3,
  protocol: 4,
  execution: 5,
  guardrails: 6,
} as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** Exit codes a conforming tool may use. */
export const PROTOCOL_EXIT_CODES: readonly number[] = Object.values(EXIT);

export const FILE_INPUT = 'input.json';
export const FILE_OUTPUT = 'output.json';

/** Name of the describe key in a CLI or stdin payload. */
export const DESCRIBE_KEY = 'describe';
export const DESCRIBE_ENV = 'INPUT_DESCRIBE';

export const ERROR_FORMATS = ['json', 'human'] as const;
export type ErrorFormat = (typeof ERROR_FORMATS)[number];

/** Environment variables, newest name first; the legacy TOOLSPEC_* names are still honoured. */
export const ENV = {
  errorFormat: ['TWYLT_ERROR_FORMAT', 'TOOLSPEC_ERROR_FORMAT'],
  debug: ['TWYLT_DEBUG', 'TOOLSPEC_DEBUG'],
  maxInputBytes: ['TWYLT_MAX_INPUT_BYTES'],
} as const;

/** Values that switch a debug flag on (compared case-insensitively). */
export const TRUTHY = ['1', 'true', 'yes', 'on'] as const;

export const DEFAULTS = {
  name: 'tool',
  version: '0.0.0',
  description: '',
} as const;

/** Placeholder path for the whole value. */
export const ROOT_PATH = '<root>';

/**
 * Deepest nesting of arrays and objects accepted in input (the payload object is level 1).
 * Deeper input is a transport error before any validator or biz can overflow the stack on it;
 * the reference's JSON parser gives up near the same depth.
 */
export const MAX_JSON_DEPTH = 1000;

/**
 * The largest input payload a tool reads (stdin, the command-line argument, input.json), in
 * bytes; TWYLT_MAX_INPUT_BYTES changes it. Larger input is a transport error, and reading
 * stops there, so a tool's memory stays bounded whatever it is fed.
 */
export const DEFAULT_MAX_INPUT_BYTES = 64 * 1024 * 1024;
