/** Step 1 of a run: the option scan over all of argv and the environment (docs/TWYLT.md section 1). Pure. */
import { constants as bufferConstants } from 'node:buffer';
import { DEFAULT_MAX_INPUT_BYTES, ENV, ERROR_FORMATS, TRUTHY, type ErrorFormat } from '../protocol/constants.js';
import { Fault } from '../protocol/errors.js';

const { MAX_STRING_LENGTH } = bufferConstants;

export interface ScannedOptions {
  /** argv without the scanned options, in order. */
  rest: string[];
  debug: boolean;
  /** The chosen error format (json when the one asked for is unsupported). */
  errorFormat: ErrorFormat;
  /** The largest input payload read, in bytes (stdin, the argument or input.json). */
  maxInputBytes: number;
  /** A bad option or setting: the run reports it as a transport error before anything else. */
  invalid?: Fault;
}

const FLAG = '--error-format';

export function scanOptions(argv: readonly string[], env: NodeJS.ProcessEnv): ScannedOptions {
  const rest: string[] = [];
  let debugFlag = false;
  let cliFormat: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--debug') debugFlag = true;
    else if (arg === FLAG) {
      // A trailing flag without a value asks for a format we cannot honour.
      cliFormat = argv[i + 1] ?? '';
      i++;
    } else if (arg.startsWith(`${FLAG}=`)) cliFormat = arg.slice(FLAG.length + 1);
    else rest.push(arg);
  }

  const requested = (cliFormat ?? firstSet(env, ENV.errorFormat) ?? 'json').trim().toLowerCase();
  const valid = (ERROR_FORMATS as readonly string[]).includes(requested);

  const debugEnv = env[ENV.debug[0]] !== undefined ? env[ENV.debug[0]] : env[ENV.debug[1]];
  const debug = debugFlag || (debugEnv !== undefined && (TRUTHY as readonly string[]).includes(debugEnv.trim().toLowerCase()));

  const limit = firstSet(env, ENV.maxInputBytes);
  const maxInputBytes = limit === undefined ? DEFAULT_MAX_INPUT_BYTES : byteCount(limit);
  const options: ScannedOptions = { rest, debug, errorFormat: valid ? (requested as ErrorFormat) : 'json', maxInputBytes };

  if (!valid) options.invalid = new Fault('InvalidErrorFormat', `Unsupported error format '${requested}'; expected json or human`);
  else if (Number.isNaN(maxInputBytes)) {
    options.invalid = new Fault('InvalidInputLimit', `${ENV.maxInputBytes[0]} must be a whole number of bytes from 1 to ${MAX_STRING_LENGTH}, got '${limit}'`);
  } else if (isUnknownOption(rest[0])) options.invalid = new Fault('UnknownOption', unknownOptionMessage(rest[0]!));
  return options;
}

/**
 * A whole number of bytes from 1 to the longest string Node can hold (UTF-8 never decodes
 * to more characters than bytes, so any input within the limit can be decoded), else NaN.
 */
function byteCount(text: string): number {
  const value = /^\s*\d+\s*$/.test(text) ? Number(text) : Number.NaN;
  return value >= 1 && value <= MAX_STRING_LENGTH ? value : Number.NaN;
}

function firstSet(env: NodeJS.ProcessEnv, names: readonly string[]): string | undefined {
  for (const name of names) {
    const value = env[name];
    if (value !== undefined && value !== '') return value;
  }
  return undefined;
}

export type ServiceOption = 'help' | 'version' | 'shortVersion';

/** Service options count only as the first remaining argument. */
export function serviceOption(first: string | undefined): ServiceOption | undefined {
  switch (first) {
    case '-h':
    case '--help':
      return 'help';
    case '--version':
      return 'version';
    case '-v':
      return 'shortVersion';
    default:
      return undefined;
  }
}

/**
 * An option-like first argument the tool does not know (`--bogus`, `-x`). Ignored as a
 * wrapper's argument, it would push the payload out of first place; it is refused instead.
 * Other foreign first arguments (no leading dash) stay ignored, as the protocol says.
 */
function isUnknownOption(first: string | undefined): boolean {
  return first !== undefined && first.length > 1 && first.startsWith('-') && serviceOption(first) === undefined;
}

function unknownOptionMessage(option: string): string {
  return `Unknown option '${option}'; a tool takes --debug and --error-format anywhere, -h/--help, --version or -v first, and the JSON payload as its first other argument`;
}
