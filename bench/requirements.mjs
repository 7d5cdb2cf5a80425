/**
 * What deriving the default requirements from the tool's imports (ADR 0037) costs a
 * describe, and that a call pays nothing for it: the same tool with requirements declared
 * (nothing derived) and without (the module graph read), in one tool file and in a tool that
 * imports 20 files of its own. Commands alternated in one run, medians; each line is a ratio
 * against the declared twin measured in the same run. Then the derivation alone, timed inside
 * a process (its module loaded and the graph read), against the declared describe.
 *
 *   node bench/requirements.mjs [--runs N]      (default 15; after npm run build)
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const at = process.argv.indexOf('--runs');
const runs = at === -1 ? 15 : Number(process.argv[at + 1]);
if (!Number.isInteger(runs) || runs < 1) throw new Error('usage: node bench/requirements.mjs [--runs N]');

const dir = mkdtempSync(join(tmpdir(), 'twylt-bench-requirements-'));
symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module', dependencies: { twylt: '*', zod: '*' } }));
mkdirSync(join(dir, 'lib'));
for (let i = 0; i < 20; i++) writeFileSync(join(dir, 'lib', `part${i}.mjs`), `import 'zod';\n${i < 19 ? `import './part${i + 1}.mjs';\n` : ''}export const part${i} = ${i};\n`);

/** The echo tool, with or without declared requirements, importing the 20 parts or not. */
function tool(name, { declared, parts }) {
  const file = join(dir, `${name}.mjs`);
  writeFileSync(file, [
    "import * as z from 'zod';",
    "import { Tool } from 'twylt';",
    parts ? "import './lib/part0.mjs';" : '',
    'class Echo extends Tool {',
    '  inputSchema = z.object({ text: z.string() });',
    '  outputSchema = z.object({ text: z.string() });',
    "  name = 'echo';",
    declared ? "  requirements = { tool: 'npm', format: 'package.json', content: '{}' };" : '',
    '  biz(data) { return { text: data.text }; }',
    '}',
    'Echo.run();',
  ].join('\n'));
  return file;
}

const pairs = {
  'one file': { declared: tool('declared', { declared: true }), derived: tool('derived', { declared: false }) },
  '21 files': { declared: tool('declared-parts', { declared: true, parts: true }), derived: tool('derived-parts', { declared: false, parts: true }) },
};
const asks = { 'describe json_spec': '{"describe": "json_spec"}', call: '{"text": "hi"}' };
const times = {};
for (let i = 0; i < runs; i++) {
  for (const [pair, files] of Object.entries(pairs)) {
    for (const [ask, payload] of Object.entries(asks)) {
      for (const [kind, file] of Object.entries(files)) {
        const started = performance.now();
        const result = spawnSync(process.execPath, [file, payload], { cwd: dir, encoding: 'utf8' });
        const elapsed = performance.now() - started;
        if (result.status !== 0) throw new Error(`${file} ${payload} failed (exit ${result.status}): ${result.stderr}`);
        (times[`${pair}, ${ask}, ${kind}`] ??= []).push(elapsed);
      }
    }
  }
}
// The derivation alone, in the process that describes: loading its module and reading the graph.
const MODULE = join(ROOT, 'packages/twylt/dist/requirements/default-requirements.js');
const inProcess = {};
for (let i = 0; i < runs; i++) {
  for (const [pair, files] of Object.entries(pairs)) {
    const script = `const t = performance.now(); const { defaultRequirements } = await import(${JSON.stringify(MODULE)}); defaultRequirements(${JSON.stringify(files.derived)}); console.log(performance.now() - t);`;
    const result = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: dir, encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`the in-process derivation failed: ${result.stderr}`);
    (inProcess[pair] ??= []).push(Number(result.stdout));
  }
}
rmSync(dir, { recursive: true, force: true });

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
console.log(`requirements: Node ${process.versions.node}, ${runs} runs each, medians`);
for (const pair of Object.keys(pairs)) {
  for (const ask of Object.keys(asks)) {
    const declared = median(times[`${pair}, ${ask}, declared`]);
    const derived = median(times[`${pair}, ${ask}, derived`]);
    console.log(`${`${pair}, ${ask}:`.padEnd(32)} derived ${derived.toFixed(1)} ms, declared ${declared.toFixed(1)} ms: ${(derived / declared).toFixed(2)}x`);
  }
}
for (const pair of Object.keys(pairs)) {
  const derivation = median(inProcess[pair]);
  const describe = median(times[`${pair}, describe json_spec, declared`]);
  console.log(`${`${pair}, the derivation alone:`.padEnd(32)} ${derivation.toFixed(1)} ms in the process, ${(derivation / describe).toFixed(3)}x of a declared describe json_spec`);
}
