/**
 * Run a command with its stderr on a pseudo-terminal (so `isatty(2)` is true, as in a
 * person's terminal) and its stdout on a pipe, through Python's standard pty module: no
 * shell, an argv list. Returns the exit code, stdout, and what reached the terminal (the
 * terminal, 200 columns wide, turns each "\n" into "\r\n").
 */
import { spawn } from 'node:child_process';

const ON_A_TERMINAL = `
import fcntl, json, os, pty, struct, subprocess, sys, termios, threading
master, slave = pty.openpty()
# 50 rows of 200 columns: a status line of a long path is not cut.
fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 200, 0, 0))
child = subprocess.Popen(sys.argv[1:], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=slave)
os.close(slave)
out = []
reader = threading.Thread(target=lambda: out.append(child.stdout.read()))
reader.start()
seen = []
while True:
    try:
        data = os.read(master, 65536)
    except OSError:
        break  # EIO: the child's end closed
    if not data:
        break
    seen.append(data)
reader.join()
code = child.wait()
sys.stdout.write(json.dumps({"code": code, "stdout": out[0].decode("utf-8", "replace"), "terminal": b"".join(seen).decode("utf-8", "replace")}))
`;

export interface TerminalRun {
  code: number;
  stdout: string;
  /** What the command wrote to its stderr, a terminal. */
  terminal: string;
}

/** `command` run by `python` with stderr a terminal, within `timeoutMs`. */
export function onTerminal(python: string, command: readonly string[], options: { env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number } = {}): Promise<TerminalRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(python, ['-c', ON_A_TERMINAL, ...command], { env: options.env ?? process.env, cwd: options.cwd, stdio: ['ignore', 'pipe', 'pipe'], timeout: options.timeoutMs ?? 120_000 });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      try {
        resolve(JSON.parse(stdout) as TerminalRun);
      } catch {
        reject(new Error(`the terminal runner ended (${signal ?? code}) without its report:\n${stdout}\n${stderr}`));
      }
    });
  });
}
