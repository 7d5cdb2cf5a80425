/**
 * The consumer floor: spawn a tool with its input as the argument and parse what it prints,
 * nothing else. Shared by bench/consumer.mjs and bench/http.mjs.
 */
import { spawn } from 'node:child_process';

export function directCall(command, input) {
  return new Promise((resolve, reject) => {
    // Detached like the client's own spawns: on Linux a new session gets its own scheduler
    // autogroup, which on a busy machine changes a child's share of CPU a lot.
    const child = spawn(command[0], [...command.slice(1), JSON.stringify(input)], { stdio: ['ignore', 'pipe', 'ignore'], detached: true });
    const chunks = [];
    child.stdout.on('data', (chunk) => chunks.push(chunk));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(JSON.parse(Buffer.concat(chunks).toString())) : reject(new Error(`exit ${code}`))));
  });
}
