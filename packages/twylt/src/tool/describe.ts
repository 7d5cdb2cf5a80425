/** Step 4 of a run: describe requests and their answers (docs/TWYLT.md sections 1 and 5). */
import { DEFAULTS, DESCRIBE_ENV, DESCRIBE_KEY, DESCRIBE_MODES, FORMAT_VERSION, isDescribeMode, type DescribeMode } from '../protocol/constants.js';
import { Fault, TwyltError } from '../protocol/errors.js';
import { formatJson } from '../protocol/render.js';
import type { JsonSchema } from '../schema/adapter.js';
import { publishSchema, SchemaError, type SchemaAdapter, type SchemaIdentity, type SchemaIo } from '../schema/index.js';
import { contractsOf, refused } from './contracts.js';
import type { Requirements, ToolDefinition } from './definition.js';
import { embeddedSpec, type JsonSpec } from './hooks.js';
import type { Request } from './transport.js';

const ALLOWED = DESCRIBE_MODES.join(', ');

/** The describe mode asked for, if any: a payload's `describe` wins over INPUT_DESCRIBE. */
export function describeRequest(request: Request | null, env: NodeJS.ProcessEnv): DescribeMode | undefined {
  const fromPayload = request?.payload[DESCRIBE_KEY];
  if (fromPayload !== undefined && fromPayload !== null && fromPayload !== '') {
    if (isDescribeMode(fromPayload)) return fromPayload;
    const shown = typeof fromPayload === 'string' ? `'${fromPayload}'` : `${JSON.stringify(fromPayload)} (not a string)`;
    throw new TwyltError('describe', {
      cause: new Fault('InvalidDescribeMode', `Unknown describe mode ${shown} in the "${DESCRIBE_KEY}" key; expected one of: ${ALLOWED}`),
    });
  }
  const fromEnv = env[DESCRIBE_ENV];
  if (fromEnv === undefined || fromEnv === '') return undefined;
  if (isDescribeMode(fromEnv)) return fromEnv;
  throw new TwyltError('describe', {
    cause: new Fault('InvalidDescribeMode', `Unknown describe mode '${fromEnv}' in ${DESCRIBE_ENV}; expected one of: ${ALLOWED}`),
  });
}

/**
 * The text a describe mode prints on stdout, newline included. A built single file answers
 * from the json_spec embedded at build time, without loading any schema code.
 */
export async function describeText(tool: ToolDefinition, mode: DescribeMode): Promise<string> {
  const spec = embeddedSpec();
  if (spec) return describeSpecText(spec, mode);
  if (mode === 'brief') return `${tool.description ?? DEFAULTS.description}\n`;
  try {
    return `${formatJson(await describeValue(tool, mode))}\n`;
  } catch (error) {
    // A schema that cannot be published, or metadata JSON cannot carry: the author's bug, reported as such.
    throw error instanceof TwyltError ? error : new TwyltError('describe', { cause: error });
  }
}

/** Every describe answer is a part of the json_spec. */
export function describeSpecText(spec: JsonSpec, mode: DescribeMode): string {
  switch (mode) {
    case 'brief':
      return `${spec.description}\n`;
    case 'schema':
      return `${formatJson({ inputSchema: spec.inputSchema, outputSchema: spec.outputSchema })}\n`;
    case 'requirements':
      return `${formatJson(spec.requirements)}\n`;
    case 'few_shots':
      return `${formatJson(spec.few_shots)}\n`;
    case 'json_spec':
      return `${formatJson(spec)}\n`;
  }
}

async function describeValue(tool: ToolDefinition, mode: Exclude<DescribeMode, 'brief'>): Promise<unknown> {
  switch (mode) {
    case 'requirements':
      return requirementsOf(tool);
    case 'few_shots':
      return fewShotsOf(tool);
    case 'schema':
      return schemas(tool);
    case 'json_spec': {
      // Both may load a module, so both start now; a failure of requirements is still the one reported.
      const requirements = requirementsOf(tool);
      const contracts = schemas(tool);
      contracts.catch(() => {});
      return {
        format_version: FORMAT_VERSION,
        name: tool.name ?? DEFAULTS.name,
        version: tool.version ?? DEFAULTS.version,
        description: tool.description ?? DEFAULTS.description,
        requirements: await requirements,
        ...(await contracts),
        few_shots: fewShotsOf(tool),
      };
    }
  }
}

async function schemas(tool: ToolDefinition): Promise<{ inputSchema: JsonSchema; outputSchema: JsonSchema }> {
  const { input, output } = await contractsOf(tool);
  const publish = (io: SchemaIo, adapter: SchemaAdapter, identity: SchemaIdentity): JsonSchema => {
    try {
      return publishSchema(adapter, identity);
    } catch (error) {
      throw error instanceof SchemaError ? refused(tool, io, error) : error;
    }
  };
  return {
    inputSchema: publish('input', input, { name: tool.inputSchemaName, version: tool.inputSchemaVersion }),
    outputSchema: publish('output', output, { name: tool.outputSchemaName, version: tool.outputSchemaVersion }),
  };
}

/** Always `{tool, format, content}` in protocol order, as the bootstrap launcher prints it. */
async function requirementsOf(tool: ToolDefinition): Promise<Requirements> {
  if (tool.requirements) {
    const { tool: name, format, content } = tool.requirements;
    return { tool: name, format, content };
  }
  const { defaultRequirements, toolEntryFile } = await import('../requirements/default-requirements.js');
  return defaultRequirements(toolEntryFile());
}

function fewShotsOf(tool: ToolDefinition): unknown[] {
  return (tool.fewShots ?? []).map(({ input, output }) => ({ input, output }));
}
