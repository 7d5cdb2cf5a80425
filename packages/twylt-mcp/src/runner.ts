/**
 * How the bridge runs one TWYLT executable: the only module that talks to `twylt/client`
 * directly, and the place of the bridge's run policy (environment, transport, checks).
 */
import { TwyltClient, type ToolSpec } from 'twylt/client';
import type { ToolConfig } from './config.js';

export const DEFAULT_TIMEOUT_MS = 30_000;
/**
 * Well below the 10 MB message limit of the SDK's stdio client: a result travels twice in
 * one message (structuredContent and the text block).
 */
export const DEFAULT_MAX_OUTPUT_BYTES = 4 * 1024 * 1024;

/** Above this many bytes the input goes on stdin: Linux caps one argument at 128 KiB. */
const MAX_ARGUMENT_BYTES = 100_000;

export interface RunnerDefaults {
  timeoutMs?: number;
  maxOutputBytes?: number;
}

/** What the bridge needs from a tool process. Failures throw the client's typed errors. */
export interface ToolRunner {
  readonly command: readonly string[];
  /** The `json_spec`, fetched once. */
  spec(): Promise<ToolSpec>;
  /** Check `input` against the published inputSchema, run the tool, check its output. */
  call(input: Record<string, unknown>, signal: AbortSignal): Promise<unknown>;
}

export function createRunner(config: ToolConfig, defaults: RunnerDefaults = {}): ToolRunner {
  const client = new TwyltClient(config.command, {
    cwd: config.cwd,
    env: {
      ...config.env,
      // The bridge must be able to read every failure, and a call must never turn into a
      // describe request because the bridge itself was started with INPUT_DESCRIBE set.
      TWYLT_ERROR_FORMAT: 'json',
      INPUT_DESCRIBE: undefined,
    },
    timeoutMs: config.timeoutMs ?? defaults.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    maxOutputBytes: config.maxOutputBytes ?? defaults.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES,
  });
  return {
    command: client.command,
    spec: () => client.spec(),
    call: async (input, signal) => {
      const transport = Buffer.byteLength(JSON.stringify(input)) > MAX_ARGUMENT_BYTES ? 'stdin' : 'cli';
      const { output } = await client.call(input, { signal, transport, validate: true });
      return output;
    },
  };
}
