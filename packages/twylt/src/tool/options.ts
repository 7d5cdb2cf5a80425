/** Step 1 of a run: the option scan over all of argv (docs/TWYLT.md section 1). Pure. */
import { ENV, ERROR_FORMATS, TRUTHY, type ErrorFormat } from '../protocol/constants.js';

export interface ScannedOptions {
  /** argv without the scanned options, in order. */
  rest: string[];
  debug: boolean;
  /** The chosen error format, or the unsupported value that was asked for. */
  errorFormat: ErrorFormat;
  invalidErrorFormat?: string;
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

  return valid
    ? { rest, debug, errorFormat: requested as ErrorFormat }
    : { rest, debug, errorFormat: 'json', invalidErrorFormat: requested };
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
