/**
 * What a launcher must know before it decides whether to import the tool: the options, the
 * transport and the describe request of PROTOCOL.md section 1, read as the run loop reads
 * them (the option scan is the run loop's own, a pure module). Wherever the run loop would
 * report an error (a bad option value, malformed JSON, an unknown mode...), the answer is
 * "no describe request", so the tool runs and reports it itself.
 */
import { DESCRIBE_ENV, DESCRIBE_KEY, isDescribeMode, type DescribeMode, type ErrorFormat } from '../protocol/constants.js';
import { scanOptions, serviceOption } from '../tool/options.js';

type Env = NodeJS.ProcessEnv;

export interface StdinSource {
  /** All of stdin; null when it is a terminal (never read). */
  read(): Promise<Buffer | null>;
}

export interface Request {
  /** The describe mode asked for; null when the tool has to decide what the run is. */
  mode: DescribeMode | null;
  errorFormat: ErrorFormat;
  debug: boolean;
  /** The bytes read from stdin, which the tool must be given to read again. */
  stdin?: Buffer;
}

/**
 * Stdin is read only when the tool itself would read it: no invalid option value, no service
 * option, no CLI payload, and stdin is not a TTY.
 */
export async function readRequest(argv: readonly string[], env: Env, stdin: StdinSource): Promise<Request> {
  const options = scanOptions(argv, env);
  const request: Request = { mode: null, errorFormat: options.errorFormat, debug: options.debug };
  const first = options.rest[0];
  if (options.invalidErrorFormat !== undefined || serviceOption(first)) return request;

  let payload: string | undefined;
  if (first !== undefined && first.trimStart().startsWith('{')) {
    payload = first;
  } else {
    const bytes = await stdin.read();
    if (bytes !== null) {
      request.stdin = bytes;
      const text = decodeUtf8(bytes);
      if (text === undefined) return request;
      if (text.trim() !== '') payload = text;
    }
  }
  request.mode = describeMode(payload, env);
  return request;
}

/**
 * A payload `describe` that is neither null nor "" wins; otherwise a non-empty INPUT_DESCRIBE.
 * null for a payload that is no JSON object, for an unknown mode, and when nothing asks.
 */
export function describeMode(payload: string | undefined, env: Env): DescribeMode | null {
  if (payload !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(payload);
    } catch {
      return null;
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return null;
    const value = Object.hasOwn(parsed, DESCRIBE_KEY) ? (parsed as Record<string, unknown>)[DESCRIBE_KEY] : undefined;
    if (value !== undefined && value !== null && value !== '') return isDescribeMode(value) ? value : null;
  }
  const fromEnv = env[DESCRIBE_ENV];
  return fromEnv && isDescribeMode(fromEnv) ? fromEnv : null;
}

/** Strict UTF-8, as the run loop reads stdin; undefined when invalid (the tool reports it). */
function decodeUtf8(bytes: Buffer): string | undefined {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return undefined;
  }
}
