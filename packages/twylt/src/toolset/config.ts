/**
 * Tool-set config files: `{"tools": [ToolEntry, ...]}`. One format for every consumer
 * (`twylt-mcp --config`, `twylt inspect --config`, `twylt-ai`). The file is checked against
 * CONFIG_SCHEMA with the runtime's own JSON Schema validator, so a mistake is named by its
 * path (`tools[0].timeoutMs`) and message, as TWYLT names input issues.
 */
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { assertSupportedJsonSchema } from '../schema/json-schema-subset.js';
import { JsonValidator } from '../schema/json-validator.js';
import type { ToolEntry } from './entry.js';
import { MAX_DURATION_MS } from './option-spec.js';
import { sandboxPolicyIssues, type SandboxPolicy } from './sandbox/policy.js';

const positiveInteger = { type: 'integer', minimum: 1 } as const;
/** A time-out: whole milliseconds a timer can hold, as the command-line flags take them. */
const duration = { type: 'integer', minimum: 1, maximum: MAX_DURATION_MS } as const;
const paths = { type: 'array', items: { type: 'string', minLength: 1 } } as const;

/** `"sandbox"`: true, false, or a policy (docs/sandbox.md). */
const SANDBOX_SCHEMA = {
  anyOf: [
    { type: 'boolean' },
    {
      type: 'object',
      properties: {
        allowRead: { ...paths, description: 'Extra paths the tool may read.' },
        allowWrite: { ...paths, description: 'Extra paths the tool may read and write.' },
        // Their form is checked by sandboxPolicyIssues, the one check of every policy.
        allowNet: { ...paths, description: 'Hosts (host, host:port, *.domain) reachable through the proxy.' },
        allowEnv: { ...paths, description: "Variables of the consumer's environment passed on." },
        memoryMb: { type: 'integer', minimum: 0, description: 'Memory of one call, in MiB; 0: no limit.' },
        processes: { type: 'integer', minimum: 0, description: 'Processes and threads of one call; 0: no limit.' },
        cpuSeconds: { type: 'integer', minimum: 0, description: 'CPU seconds of each process; 0: no limit.' },
      },
      additionalProperties: false,
    },
  ],
  description: 'Run the tool in a kernel sandbox (docs/sandbox.md): true, false, or a policy.',
} as const;

/** The JSON Schema of a config file; an editor can use it through the file's `$schema`. */
export const CONFIG_SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  title: 'TWYLT tool set',
  type: 'object',
  properties: {
    $schema: { type: 'string', description: 'Lets an editor find this schema; ignored.' },
    sandbox: { ...SANDBOX_SCHEMA, description: 'The default of every tool without its own "sandbox".' },
    tools: {
      type: 'array',
      minItems: 1,
      description: 'The TWYLT executables to serve, at least one.',
      items: {
        type: 'object',
        properties: {
          command: {
            type: 'array',
            minItems: 1,
            items: { type: 'string', minLength: 1 },
            description: 'The argv: run directly, never through a shell.',
          },
          cwd: { type: 'string', minLength: 1, description: "Working directory, relative to the config file's directory." },
          env: { type: 'object', additionalProperties: { type: 'string' }, description: 'Added to the environment.' },
          timeoutMs: { ...duration, description: 'Kill a call after this many milliseconds.' },
          maxOutputBytes: { ...positiveInteger, description: 'Limit of stdout and of stderr, each, in bytes.' },
          name: { type: 'string', minLength: 1, description: 'The name to serve it under; default: its published name.' },
          transport: { enum: ['cli', 'stdin', 'file'], description: 'How calls reach the tool; default: cli, stdin for large inputs.' },
          category: { type: 'string', minLength: 1, description: 'Where the tool sits in a catalog: "pack/subfolder", slash-separated.' },
          source: { type: 'string', minLength: 1, description: "The tool's entry file, relative to the config file's directory." },
          describeTimeoutMs: { ...duration, description: 'Stop the start-up describe after this many milliseconds (default: timeoutMs).' },
          describeCache: {
            type: 'object',
            description: 'The json_spec a scan recorded; used without starting the tool while the hash of its inputs is unchanged.',
            properties: {
              inputs: { type: 'array', items: { type: 'string', minLength: 1 }, description: "Files and folders hashed, relative to the config file's directory." },
              hash: { type: 'string', minLength: 1 },
              spec: { type: 'object', additionalProperties: true },
            },
            required: ['inputs', 'hash', 'spec'],
            additionalProperties: false,
          },
          warm: { type: 'integer', minimum: 0, description: 'Processes started ahead, waiting for calls on stdin; default 0: none.' },
          sandbox: SANDBOX_SCHEMA,
        },
        required: ['command'],
        additionalProperties: false,
      },
    },
  },
  required: ['tools'],
  additionalProperties: false,
} as const;

/** A config file that cannot be read or does not have the documented shape. */
export class ConfigError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ConfigError';
  }
}

let validator: JsonValidator | undefined;

/**
 * Check the text of a config file. A relative `cwd` is taken relative to the file's
 * directory, which is also the default working directory of its tools, so that a config
 * can name its tools by paths relative to itself wherever the consumer is started from.
 */
export function parseConfig(text: string, file: string): ToolEntry[] {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`${file} is not valid JSON: ${(error as Error).message}`);
  }
  if (!validator) {
    assertSupportedJsonSchema(CONFIG_SCHEMA);
    validator = new JsonValidator(CONFIG_SCHEMA);
  }
  const result = validator.validate(data, false);
  if (!result.ok) {
    // The value of a missing field is its parent, and of an unknown one the field itself: neither helps.
    const shown = (code: string) => code !== 'required' && code !== 'unknown_field';
    const lines = result.issues.map((issue) => `  ${issue.path}: ${issue.message}${shown(issue.code) ? `, got ${JSON.stringify(issue.value)}` : ''}`);
    throw new ConfigError(`${file} is not a valid TWYLT tool-set config:\n${lines.join('\n')}`);
  }
  const { tools, sandbox } = data as { tools: ToolEntry[]; sandbox?: ToolEntry['sandbox'] };
  // What the schema cannot say (the form of a host): one check for every policy, named by its path here.
  const policies: [string, ToolEntry['sandbox']][] = [['sandbox', sandbox], ...tools.map((tool, at): [string, ToolEntry['sandbox']] => [`tools[${at}].sandbox`, tool.sandbox])];
  const issues = policies.flatMap(([path, policy]) =>
    typeof policy === 'object' ? sandboxPolicyIssues(policy as SandboxPolicy).map((issue) => `  ${path}.${issue.path}: ${issue.message}, got ${JSON.stringify(issue.value)}`) : [],
  );
  if (issues.length > 0) throw new ConfigError(`${file} is not a valid TWYLT tool-set config:\n${issues.join('\n')}`);
  const base = dirname(resolve(file));
  return tools.map((tool) => {
    const entry: ToolEntry = { ...tool, cwd: resolve(base, tool.cwd ?? '.') };
    // The file's default, unless the tool has its own.
    if (entry.sandbox === undefined && sandbox !== undefined) entry.sandbox = sandbox;
    if (typeof entry.sandbox === 'object') {
      const at = (list: string[] | undefined) => list?.map((path) => resolve(base, path));
      entry.sandbox = { ...entry.sandbox, allowRead: at(entry.sandbox.allowRead), allowWrite: at(entry.sandbox.allowWrite) };
    }
    if (tool.source !== undefined) entry.source = resolve(base, tool.source);
    if (tool.describeCache) entry.describeCache = { ...tool.describeCache, inputs: tool.describeCache.inputs.map((input) => resolve(base, input)) };
    return entry;
  });
}

/** Read and check a config file. */
export async function readConfig(file: string): Promise<ToolEntry[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new ConfigError(`cannot read config file ${file}: ${(error as NodeJS.ErrnoException).message}`, { cause: error });
  }
  return parseConfig(text, file);
}

/** The tools of config files (in order) followed by those given as commands. Throws ConfigError. */
export async function collectEntries(configs: readonly string[], commands: readonly (readonly string[])[]): Promise<ToolEntry[]> {
  const fromFiles = await Promise.all(configs.map((file) => readConfig(file)));
  return [...fromFiles.flat(), ...commands.map((command) => ({ command: [...command] }))];
}
