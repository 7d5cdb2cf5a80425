/**
 * The keeper: a small process beside a consumer that ends the consumer's tools when the
 * consumer ends, however it ends (SIGKILL and the OOM killer included). Its stdin is a pipe
 * whose only writer is the consumer, which writes `+PID` when it starts a tool (a process
 * group leader) and `-PID` when that group is gone. When the pipe reaches its end, the
 * consumer is gone: every group still registered is killed, and the keeper exits.
 *
 * `keeperMain` runs in a process of its own, started with the runtime's evaluate option
 * (spawn.ts): it is self-contained (nothing from outside its body), imports nothing, and so
 * costs a bare runtime start, once per consumer, off every call's critical path.
 */
export function keeperMain(): void {
  const groups = new Set<number>();
  let pending = '';
  // Signals meant for the consumer (a terminal's Ctrl-C, a supervisor's SIGTERM) are not the
  // keeper's to act on: it ends only with the consumer's end of the pipe.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => {});
  const endAll = () => {
    for (const pid of groups) {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // that group has ended already
      }
    }
    process.exit(0);
  };
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (chunk: string) => {
    const lines = (pending + chunk).split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) {
      const pid = Number(line.slice(1));
      if (!Number.isSafeInteger(pid) || pid <= 1) continue;
      if (line.startsWith('+')) groups.add(pid);
      else if (line.startsWith('-')) groups.delete(pid);
    }
  });
  process.stdin.on('end', endAll);
  process.stdin.on('error', endAll);
}
