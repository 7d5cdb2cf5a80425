#!/usr/bin/env node
// The main job, end to end: the echo example described, called over each transport, and failing cleanly.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const tool = fileURLToPath(new URL('../build/examples/echo/tool.js', import.meta.url));

function step(title, args, { input = '', env = {}, cwd } = {}) {
  const shown = [`node ${tool.replace(process.cwd() + '/', '')}`, ...args.map((a) => `'${a}'`)].join(' ');
  const prefix = Object.entries(env).map(([k, v]) => `${k}=${v} `).join('');
  console.log(`\n## ${title}\n$ ${input ? `echo '${input}' | ` : ''}${prefix}${shown}`);
  const result = spawnSync(process.execPath, [tool, ...args], { input, env: { ...process.env, ...env }, cwd, encoding: 'utf8' });
  if (result.stdout) process.stdout.write(result.stdout);
  if (result.stderr) process.stdout.write(`[stderr] ${result.stderr}`);
  console.log(`[exit ${result.status}]`);
  return result.status;
}

const codes = [];
codes.push(step('Describe the tool', [], { env: { INPUT_DESCRIBE: 'json_spec' } }) === 0);
codes.push(step('Call with a JSON argument', ['{"text": "hello"}']) === 0);
codes.push(step('Call through stdin', [], { input: '{"text": "from stdin"}' }) === 0);
const dir = mkdtempSync(join(tmpdir(), 'twylt-demo-'));
writeFileSync(join(dir, 'input.json'), '{"text": "from a file"}');
codes.push(step('File mode (input.json -> output.json)', [], { cwd: dir }) === 0);
console.log(`output.json: ${readFileSync(join(dir, 'output.json'), 'utf8')}`);
rmSync(dir, { recursive: true, force: true });
codes.push(step('Invalid input: a normalized error, exit 2', ['{"txt": "typo"}']) === 2);
codes.push(step('The same error for people', ['{"txt": "typo"}', '--error-format', 'human']) === 2);

const failed = codes.filter((ok) => !ok).length;
console.log(failed === 0 ? '\ndemo: every step behaved as the protocol says' : `\ndemo: ${failed} step(s) misbehaved`);
process.exit(failed === 0 ? 0 : 1);
