/**
 * `twylt inspect` as a real process for the tests: started on 127.0.0.1 with port 0 and
 * --no-open, its link read from stderr; plain HTTP requests with full control of Host,
 * Origin and the other headers; and Debian's Chromium, when installed, driven by playwright-core.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { JS_RUNTIME } from '../support/runtimes.js';
import { repoRoot, twyltBin } from '../support/twylt-cli.js';

export const fixturesDir = fileURLToPath(new URL('./fixtures/', import.meta.url));

export interface Inspect {
  child: ChildProcess;
  /** The printed link, with its token. */
  url: string;
  origin: string;
  token: string;
  port: number;
  /** Everything the server wrote to stderr so far. */
  stderr(): string;
  /** SIGTERM, then its exit code and stderr. */
  stop(): Promise<{ code: number | null; stderr: string }>;
}

const LINK = /^twylt inspect: (http:\/\/127\.0\.0\.1:(\d+))\/#token=([\w-]+)$/m;

/** Start `twylt inspect --no-open --port 0 <args>` and wait for its link (30 s at most). */
export function startInspect(args: string[], env: Record<string, string> = {}, options: { open?: boolean } = {}): Promise<Inspect> {
  const child = spawn(JS_RUNTIME[0]!, [...JS_RUNTIME.slice(1), twyltBin, 'inspect', ...(options.open ? [] : ['--no-open']), '--port', '0', ...args], {
    cwd: repoRoot,
    env: { ...process.env, NO_COLOR: '1', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`twylt inspect printed no link within 30 s; stderr:\n${stderr}`));
    }, 30_000);
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
      const found = LINK.exec(stderr);
      if (!found) return;
      clearTimeout(timer);
      const [, origin, port, token] = found;
      resolve({
        child,
        url: `${origin}/#token=${token}`,
        origin: origin!,
        token: token!,
        port: Number(port),
        stderr: () => stderr,
        async stop() {
          if (child.exitCode === null) child.kill('SIGTERM');
          const code = await exited;
          return { code, stderr };
        },
      });
    });
    exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`twylt inspect exited with ${code} before printing its link; stderr:\n${stderr}`));
    });
  });
}

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One HTTP request to 127.0.0.1:port, headers exactly as given (Host included). */
export function send(port: number, options: { method?: string; path?: string; headers?: Record<string, string>; body?: string | Buffer }): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method: options.method ?? 'GET', path: options.path ?? '/', headers: { host: `127.0.0.1:${port}`, ...options.headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

/** Where Debian puts its Chromium; TWYLT_CHROMIUM may name another. */
export const chromiumPath = process.env.TWYLT_CHROMIUM ?? '/usr/bin/chromium';
export const noChromium = !existsSync(chromiumPath);
export const NO_CHROMIUM_REASON = `skipped: no Chromium at ${chromiumPath} (apt-get install chromium, as .ci/run does)`;

/** Chromium headless, offline-minded and without a profile of its own (playwright makes a fresh one). */
export async function launchChromium() {
  const { chromium } = await import('playwright-core');
  return chromium.launch({
    executablePath: chromiumPath,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/** twylt inspect and its page open in Chromium; `errors` collects the page's script errors. */
export interface InspectPage {
  inspect: Inspect;
  page: Page;
  errors: string[];
  close(): Promise<void>;
}

/** `twylt inspect ARGS` with its page loaded in a fresh Chromium at `viewport` (light, no motion). */
export async function openInspectPage(args: string[], viewport: { width: number; height: number }): Promise<InspectPage> {
  const inspect = await startInspect(args);
  let browser: Browser | undefined;
  try {
    browser = await launchChromium();
    const page = await browser.newPage({ viewport, colorScheme: 'light', reducedMotion: 'reduce' });
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(inspect.url);
    const opened = browser;
    return {
      inspect,
      page,
      errors,
      async close() {
        await opened.close();
        await inspect.stop();
      },
    };
  } catch (error) {
    await browser?.close();
    await inspect.stop();
    throw error;
  }
}

/** Wait for `check` to hold (10 s at most); its last failure is the error. */
export async function until(check: () => Promise<void> | void, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}
