/**
 * Which tools to serve: the `ToolConfig` shape, and the `--config` file that holds a list
 * of them. Validation names the exact entry and field that is wrong.
 */
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { z } from 'zod';

/** One TWYLT executable to serve as an MCP tool. */
export interface ToolConfig {
  /** The tool's argv; run directly, never through a shell. */
  command: string[];
  /** Working directory of the tool (default: the bridge's own). */
  cwd?: string;
  /** Added to the bridge's environment for this tool. */
  env?: Record<string, string>;
  /** Kill a call (and the describe at start-up) after this long. */
  timeoutMs?: number;
  /** Limit for the tool's stdout and for its stderr, each. */
  maxOutputBytes?: number;
  /** The MCP tool name; default: the name the tool publishes. */
  name?: string;
}

const positiveInteger = z.number().int().positive();

const ToolEntry = z.strictObject({
  command: z.array(z.string().min(1, 'an argument must not be empty')).min(1, 'the command needs at least the program'),
  cwd: z.string().min(1).optional(),
  env: z.record(z.string(), z.string()).optional(),
  timeoutMs: positiveInteger.optional(),
  maxOutputBytes: positiveInteger.optional(),
  name: z.string().min(1).optional(),
});

const ConfigFile = z.strictObject({
  // Lets an editor find a schema for the file; ignored here.
  $schema: z.string().optional(),
  tools: z.array(ToolEntry).min(1, 'list at least one tool'),
});

/** A config file that cannot be read or does not have the documented shape. */
export class ConfigError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ConfigError';
  }
}

/**
 * Check the text of a config file. A relative `cwd` is taken relative to the file's
 * directory, which is also the default working directory of its tools, so that a config
 * can name its tools by paths relative to itself wherever the bridge is started from.
 */
export function parseConfig(text: string, file: string): ToolConfig[] {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`${file} is not valid JSON: ${(error as Error).message}`);
  }
  const parsed = ConfigFile.safeParse(data);
  if (!parsed.success) {
    throw new ConfigError(`${file} is not a valid twylt-mcp config:\n${z.prettifyError(parsed.error)}`);
  }
  const base = dirname(resolve(file));
  return parsed.data.tools.map((tool) => ({ ...tool, cwd: resolve(base, tool.cwd ?? '.') }));
}

/** Read and check a config file. */
export async function readConfig(file: string): Promise<ToolConfig[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new ConfigError(`cannot read config file ${file}: ${(error as NodeJS.ErrnoException).message}`, { cause: error });
  }
  return parseConfig(text, file);
}
