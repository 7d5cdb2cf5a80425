/**
 * A benchmark script's command line: node:util's parseArgs with the options every script has
 * (--help, --json, --quick). Wrong usage prints what is wrong and the usage, and exits 64.
 */
import { parseArgs } from 'node:util';

/** The parsed options; --help prints `usage` and exits 0. */
export function benchFlags(usage, options) {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        help: { type: 'boolean', short: 'h', default: false },
        json: { type: 'boolean', default: false },
        quick: { type: 'boolean', default: false },
        ...options,
      },
    }));
  } catch (error) {
    usageError(error.message, usage);
  }
  if (values.help) {
    process.stdout.write(`${usage}\n`);
    process.exit(0);
  }
  return values;
}

/** Say what is wrong with the command line, then the usage; exit 64 (EX_USAGE). */
export function usageError(message, usage) {
  process.stderr.write(`${message}\n${usage}\n`);
  process.exit(64);
}
