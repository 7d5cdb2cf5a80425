/**
 * What a launcher must know before it decides whether to import the tool: the options, the
 * transport and the describe request of docs/TWYLT.md section 1, read as the run loop reads
 * them (the option scan and the payload parse are the run loop's own). Wherever the run loop
 * would report an error (a bad option value, malformed JSON, an unknown mode...), the answer
 * is "no describe request", so the tool runs and reports it itself.
 */
import { Readable } from 'node:stream';
import { DESCRIBE_ENV, DESCRIBE_KEY, isDescribeMode, type DescribeMode, type ErrorFormat } from '../protocol/constants.js';
import { TwyltError } from '../protocol/errors.js';
import { scanOptions, serviceOption } from '../tool/options.js';
import { isCliPayload, readRequest as readPayload, type JsonObject, type Request as Payload, type Stdin } from '../tool/transport.js';

type Env = NodeJS.ProcessEnv;

export interface StdinSource {
  /** All of stdin, up to `limit` + 1 bytes; null when it is a terminal (never read). */
  read(limit: number): Promise<Buffer | null>;
}

export interface Request {
  /** The describe mode asked for; null when the tool has to decide what the run is. */
  mode: DescribeMode | null;
  errorFormat: ErrorFormat;
  debug: boolean;
  /** The bytes read from stdin, which the tool must be given to read again unless `payload` holds them parsed. */
  stdin?: Buffer;
  /** The CLI or stdin payload, parsed as the run loop parses it: handed to the tool's run, never parsed twice. */
  payload?: Payload;
}

/** Whether the request will come from stdin (no invalid option, service option or CLI payload): it may take a while. */
export function inputToCome(argv: readonly string[], env: Env): boolean {
  const options = scanOptions(argv, env);
  const first = options.rest[0];
  return !options.invalid && !serviceOption(first) && !isCliPayload(first);
}

/**
 * Stdin is read only when the tool itself would read it: no invalid option value, no service
 * option, no CLI payload, and stdin is not a TTY.
 */
export async function readRequest(argv: readonly string[], env: Env, stdin: StdinSource): Promise<Request> {
  const options = scanOptions(argv, env);
  const request: Request = { mode: null, errorFormat: options.errorFormat, debug: options.debug };
  const first = options.rest[0];
  if (options.invalid || serviceOption(first)) return request;

  const bytes = isCliPayload(first) ? null : await stdin.read(options.maxInputBytes);
  if (bytes !== null) request.stdin = bytes;
  let payload: Payload | null;
  try {
    payload = await readPayload(options.rest, () => asStdin(bytes), options.maxInputBytes);
  } catch (error) {
    if (error instanceof TwyltError) return request; // unreadable input: the tool's own run reports it
    throw error;
  }
  if (payload) request.payload = payload;
  request.mode = describeMode(payload?.payload, env);
  return request;
}

/**
 * A payload `describe` that is neither null nor "" wins; otherwise a non-empty INPUT_DESCRIBE.
 * null for an unknown mode (the tool reports it), and when nothing asks.
 */
function describeMode(payload: JsonObject | undefined, env: Env): DescribeMode | null {
  const value = payload && Object.hasOwn(payload, DESCRIBE_KEY) ? payload[DESCRIBE_KEY] : undefined;
  if (value !== undefined && value !== null && value !== '') return isDescribeMode(value) ? value : null;
  const fromEnv = env[DESCRIBE_ENV];
  return fromEnv && isDescribeMode(fromEnv) ? fromEnv : null;
}

/** The bytes already read, as the stdin the run loop's reader takes (a terminal when there are none). */
function asStdin(bytes: Buffer | null): Stdin {
  return Object.assign(Readable.from(bytes === null ? [] : [bytes]), { isTTY: bytes === null });
}
