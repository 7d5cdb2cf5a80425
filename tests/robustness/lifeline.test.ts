/**
 * A tool never outlives its consumer (ADR 0029): whatever ends the consumer, SIGKILL
 * included, the keeper kills every tool process group it left, the tool's own subprocesses
 * with it. The consumer here is a real Node process using the built client.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { isAlive, keepersOf, waitGone } from '../support/processes.js';

const CLIENT = fileURLToPath(new URL('../../packages/twylt/dist/client/index.js', import.meta.url));
const FAMILY = fileURLToPath(new URL('../fixtures/robustness/family.mjs', import.meta.url));
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A consumer that calls the family tool (which never answers) and then `then`s: waits, or exits once `goFile` exists. */
function startConsumer(pidFile: string, goFile: string, then: 'wait' | 'exit') {
  const script = `
    import { TwyltClient } from ${JSON.stringify(CLIENT)};
    const client = new TwyltClient([process.execPath, ${JSON.stringify(FAMILY)}], { timeoutMs: 0 });
    client.call({}, { validate: false }).catch(() => {});
    if (${JSON.stringify(then)} === 'exit') {
      const wait = setInterval(async () => {
        const { existsSync } = await import('node:fs');
        if (existsSync(${JSON.stringify(goFile)})) { clearInterval(wait); process.exit(0); }
      }, 20);
    }`;
  return spawn(process.execPath, ['--input-type=module', '-e', script], {
    env: { ...process.env, FAMILY_PID_FILE: pidFile },
    stdio: 'ignore',
  });
}

async function waitForFile(file: string, ms = 20_000): Promise<string> {
  const end = Date.now() + ms;
  while (!existsSync(file)) {
    if (Date.now() > end) throw new Error(`${file} never appeared`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return readFileSync(file, 'utf8');
}

describe.skipIf(process.platform !== 'linux')('tools die with their consumer (Linux: /proc)', () => {
  it.each(['SIGKILL', 'exit'] as const)('a consumer ended by %s leaves no tool process and no keeper', async (how) => {
    const dir = mkdtempSync(join(tmpdir(), 'twylt-lifeline-'));
    dirs.push(dir);
    const pidFile = join(dir, 'pids');
    const goFile = join(dir, 'go');
    const consumer = startConsumer(pidFile, goFile, how === 'exit' ? 'exit' : 'wait');
    const [tool, child] = (await waitForFile(pidFile)).split(' ').map(Number) as [number, number];
    expect(isAlive(tool)).toBe(true);
    expect(isAlive(child)).toBe(true);
    const ownKeepers = keepersOf(consumer.pid!);
    expect(ownKeepers).toHaveLength(1);

    if (how === 'SIGKILL') consumer.kill('SIGKILL');
    else writeFileSync(goFile, '');
    await new Promise((resolve) => consumer.once('exit', resolve));

    // After the consumer's end the tool, its subprocess and the keeper are gone (they never
    // end by themselves; the bound is for a loaded machine, not a measure).
    expect(await waitGone(tool, 10_000)).toBe(true);
    expect(await waitGone(child, 10_000)).toBe(true);
    expect(await waitGone(ownKeepers[0]!, 10_000)).toBe(true);
  });
});
