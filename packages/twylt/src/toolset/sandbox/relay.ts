/**
 * The relay inside a sandbox with allowed hosts: it offers the tool's proxy in the consumer (a Unix
 * socket bound into the sandbox) on 127.0.0.1, then runs the tool and ends as it ends. A
 * sandbox without allowed hosts has no relay and pays nothing for it.
 *
 * `relayMain` runs with the runtime's evaluate option (as the keeper does, client/keeper.ts):
 * self-contained, it reads its settings (RelaySettings as JSON) from its last argument. Not
 * from a variable: /proc/PID/environ keeps what a process was started with, and the tool can
 * read the relay's and bwrap's; their environment is exactly the tool's (issue 34).
 */
export interface RelaySettings {
  socket: string;
  port: number;
  command: readonly string[];
}

export function relayMain(): void {
  const { createServer, connect } = process.getBuiltinModule('node:net');
  const { spawn } = process.getBuiltinModule('node:child_process');
  const settings = JSON.parse(process.argv.at(-1) ?? '{}');
  const server = createServer((client: import('node:net').Socket) => {
    const upstream = connect(settings.socket);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    client.pipe(upstream).pipe(client);
  });
  server.listen(settings.port, '127.0.0.1', () => {
    const [file, ...args] = settings.command as string[];
    const tool = spawn(file, args, { stdio: 'inherit' });
    tool.on('error', (error: NodeJS.ErrnoException) => {
      process.stderr.write(`${error.message}\n`);
      process.exit(127);
    });
    tool.on('exit', (code: number | null, signal: NodeJS.Signals | null) => {
      if (signal) process.kill(process.pid, signal);
      process.exit(code ?? 1);
    });
  });
}
