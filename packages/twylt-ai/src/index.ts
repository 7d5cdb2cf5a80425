/**
 * twylt-ai: any TWYLT tool, in any language, as a tool of a TypeScript agent.
 *
 *   const tools = await twyltTools([['python3', 'tools/echo.py'], { command: ['node', 'tool.js'], name: 'echo_ts' }]);
 *   const result = await generateText({ model, tools, stopWhen: stepCountIs(5), prompt: '...' });
 *
 * `describeForAgents` gives the same tools without the AI SDK, for other frameworks.
 */
export { aiTool, twyltTool, twyltTools, type TwyltAiTool, type TwyltExecuteOptions, type TwyltToolsOptions } from './ai-sdk.js';
export { TOOL_NAME_PATTERN, describeForAgents, type AgentResult, type AgentTool, type AgentToolsOptions } from './agent-tools.js';
export { TwyltCallError, type FailureKind } from './error.js';
export { searchTools, twyltSearchTools, type SearchToolsOptions, type ToolCard, type TwyltSearchPair, type TwyltSearchToolsOptions } from './search.js';
export { ConfigError, SpecCache, ToolsetError, readConfig, type ToolEntry, type ToolEntryLike } from 'twylt/toolset';
export { JsonNumber } from 'twylt/client';
