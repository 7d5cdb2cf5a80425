#!/usr/bin/env node
/** The `twylt-mcp` command. Exit codes: 1 when the bridge cannot start, 2 for a usage error. */
import { createRequire } from 'node:module';
import { parseCli, USAGE, UsageError, type CliPlan } from './args.js';
import { stderrLog } from './log.js';

async function main(argv: readonly string[]): Promise<void> {
  let plan: CliPlan;
  try {
    plan = parseCli(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    stderrLog(`${error.message}\nRun "twylt-mcp --help" for usage.`);
    process.exitCode = 2;
    return;
  }
  if (plan.help) {
    process.stdout.write(USAGE);
    return;
  }
  if (plan.version) {
    const { version } = createRequire(import.meta.url)('../package.json') as { version: string };
    process.stdout.write(`twylt-mcp ${version}\n`);
    return;
  }

  // Loaded only now: help and usage errors need neither the MCP SDK nor Zod.
  const [{ ConfigError, collectEntries }, { serveStdio }, { StartupError }] = await Promise.all([
    import('twylt/toolset'),
    import('./stdio.js'),
    import('./tools.js'),
  ]);
  try {
    const configs = await collectEntries(plan.configs, plan.commands);
    const server = await serveStdio(configs, { timeoutMs: plan.timeoutMs, maxOutputBytes: plan.maxOutputBytes });
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      process.once(signal, () => {
        process.exitCode = 128 + (signal === 'SIGINT' ? 2 : 15);
        // Closing kills the tool processes of calls still running; the bridge then ends by
        // itself once they are reaped, or after a grace period at the latest.
        setTimeout(() => process.exit(), 2000).unref();
        void server.close();
      });
    }
  } catch (error) {
    if (!(error instanceof ConfigError || error instanceof StartupError)) throw error;
    stderrLog(`cannot start:\n${error.message}`);
    process.exitCode = 1;
  }
}

await main(process.argv.slice(2));
