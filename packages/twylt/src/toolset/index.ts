/**
 * twylt/toolset: a set of TWYLT executables, as every consumer of several tools needs it
 * (`twylt-mcp`, `twylt inspect`, `twylt-ai`): entries, config files, command lines, the
 * start-up describe with its checks, and the shared run policy.
 *
 *   const tools = await describeToolset(await collectEntries(['tools.json'], []));
 *   const { output } = await tools[0].runner.call({ text: 'hi' });
 */
export { toEntry, showCommand, type ToolEntry, type ToolEntryLike } from './entry.js';
export { DEFAULT_CATEGORY, categoryCounts, categoryOf, inCategory } from './category.js';
export { DEFAULT_QUERY_TIMEOUT_MS, SEARCH_INPUT_SCHEMA, SEARCH_KEY_ENV, SEARCH_OPTIONS, embeddingsFromFlags, type EmbeddingsFlags, type SearchInput } from './search/options.js';
export { CONFIG_SCHEMA, ConfigError, collectEntries, parseConfig, readConfig } from './config.js';
export { SEPARATOR, UsageError, cutAtSeparator, splitArgv, splitCommands } from './args.js';
export { MAX_DURATION_MS, USAGE_EXIT, formatOptions, optionHelp, parseCount, parseDuration, type OptionSpec, type OptionValues } from './option-spec.js';
export { TOOLSET_OPTIONS, metricsAddress, toolsetOptions } from './options.js';
export { commandLineArguments } from '../protocol/runtime.js';
export { DEFAULT_MAX_OUTPUT_BYTES, DEFAULT_TIMEOUT_MS } from '../client/process.js';
export { createRunner } from './runner.js';
export { BUILT_IN_DEFAULTS, CONSUMER_ENV_PREFIX, resolveLimits, resolvePolicy, warmCapOf, type LimitFields, type ToolDefaults, type ToolLimits, type ToolPolicy } from './policy.js';
export { assembleToolset, type AssembledToolset, type ToolsetSources } from './catalog/assemble.js';
export { DEFAULT_MAX_WARM, DEFAULT_WARM_IDLE_MS, WarmCap, WarmPool, type WarmPoolOptions } from './warm.js';
export type { RunnerCallOptions, RunnerDefaults, ToolRunner } from './runner.js';
export { SpecCache, ToolsetError, UndescribedError, describeEntry, describeToolset } from './describe.js';
export type { DescribeToolsetOptions, DescribedTool } from './describe.js';
export { CallLimiter, QueueFullError, type LimiterOptions } from './limiter.js';
export { CHANNEL, refusalChannel, requestChannel, traceEnv } from '../events/channels.js';
export type { CallMessage, SpanIds, ProcessMessage, QueueMessage, RefusalMessage, RequestMessage, SandboxRefusalMessage, TraceCarrier, ValidateMessage, WarmMessage } from '../events/channels.js';
export { isRecord, jsonKind } from '../protocol/record.js';
export { formatPath } from '../protocol/issues.js';
export { FAILURE_KINDS, describeFailure, failureKind, invalidArguments, issueLines, type CallFailure, type FailureKind } from './failure.js';
export { scanForServing, scanTools, writeCatalog, defaultEnvsDir, defaultWorkspacesDir, type ScanOptions, type ScannedTool, type ScanStatus } from './catalog/index.js';
export { commandPath } from './catalog/outside.js';
export type { DescribeCache } from './entry.js';
export type { PrepareOptions, PreparedSandbox, SandboxPolicy } from './sandbox/index.js';
export { SANDBOX_OPTIONS, entrySandbox, sandboxForEntries, sandboxFromFlags } from './sandbox/flags.js';
export { SandboxPolicyError, SandboxUnavailableError } from './sandbox/errors.js';
export { HOST_FORMS, SANDBOX_DEFAULTS, checkSandboxPolicy, isHostPattern, sandboxPolicyIssues, type PolicyIssue } from './sandbox/policy.js';
export type { SandboxLimit, SpawnSandbox } from '../client/spawn.js';

import { checkSandboxPolicy } from './sandbox/policy.js';

/**
 * Check that the kernel sandbox works here and start what it needs (docs/sandbox.md); throws
 * SandboxUnavailableError otherwise. Its code is loaded only by this call.
 */
export async function prepareSandbox(
  policy?: import('./sandbox/index.js').SandboxPolicy | true,
  options?: import('./sandbox/index.js').PrepareOptions,
): Promise<import('./sandbox/index.js').PreparedSandbox> {
  // Checked as flags and config files are, before the driver is loaded.
  if (policy !== undefined) checkSandboxPolicy(policy);
  const { prepareSandbox: prepare } = await import('./sandbox/index.js');
  return prepare(policy, options);
}
