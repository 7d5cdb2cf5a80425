#!/usr/bin/env node
/** The `twylt` command. Each subcommand is loaded only when it is run, to keep start-up light. */
import { run } from './run.js';

process.exitCode = await run(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: process.env,
  cwd: process.cwd(),
});
