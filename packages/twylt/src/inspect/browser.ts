/**
 * Opening the page in the user's default browser, where there is one. Best effort: the
 * opener runs detached as an argument list (never a shell), and a failure only earns a
 * note, since the link is printed anyway.
 */
import { spawn } from 'node:child_process';

/** The opener's argv for this system, or why there is none. */
export function browserCommand(url: string, platform: NodeJS.Platform = process.platform, env: NodeJS.ProcessEnv = process.env): { argv: string[] } | { reason: string } {
  // $BROWSER (as Python's webbrowser and many tools read it; remote editors set it) wins.
  const chosen = env.BROWSER?.split(':').find((entry) => entry.trim() !== '');
  if (chosen) return { argv: [chosen.trim(), url] };
  if (platform === 'darwin') return { argv: ['open', url] };
  // `start` is built into cmd; its first quoted argument is a window title, hence the empty
  // one (Node writes an empty argument as "").
  if (platform === 'win32') return { argv: ['cmd', '/c', 'start', '', url] };
  if (!env.DISPLAY && !env.WAYLAND_DISPLAY) return { reason: 'no graphical display (neither DISPLAY nor WAYLAND_DISPLAY is set)' };
  return { argv: ['xdg-open', url] };
}

/** Start the browser on `url`; `note` hears why it could not be, if it could not. */
export function openBrowser(url: string, note: (message: string) => void): void {
  const found = browserCommand(url);
  if ('reason' in found) {
    note(`not opening a browser: ${found.reason}; open the link above yourself`);
    return;
  }
  const [program, ...args] = found.argv;
  const child = spawn(program!, args, { detached: true, stdio: 'ignore', windowsHide: true });
  child.on('error', (error) => note(`could not open a browser with ${program} (${error.message}); open the link above yourself`));
  child.on('exit', (code) => {
    if (code !== 0 && code !== null) note(`${program} exited with ${code}; if no browser opened, open the link above yourself`);
  });
  child.unref();
}
