/**
 * The page and its two files (the UI bundle and its style sheet), built by scripts/build.mjs
 * into dist/inspect/ui/ beside this module's own built file, and read once at start-up.
 * Nothing is fetched from elsewhere: the page works offline.
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

export interface Asset {
  type: string;
  body: Buffer;
}

/** The files under /ui/, by name. */
export async function loadAssets(dir: URL = new URL('./ui/', import.meta.url)): Promise<Map<string, Asset>> {
  const files = [
    ['app.js', 'text/javascript; charset=utf-8'],
    ['app.css', 'text/css; charset=utf-8'],
  ] as const;
  const assets = new Map<string, Asset>();
  for (const [name, type] of files) {
    try {
      assets.set(name, { type, body: await readFile(new URL(name, dir)) });
    } catch (error) {
      throw new Error(`the inspector's page is missing ${fileURLToPath(new URL(name, dir))} (${(error as NodeJS.ErrnoException).code}): rebuild twylt with "npm run build"`);
    }
  }
  return assets;
}

const ICON = `data:image/svg+xml,${encodeURIComponent(
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#3b5bdb"/><path d="M4 5h8M8 5v7" stroke="#fff" stroke-width="2" stroke-linecap="round"/></svg>',
)}`;

/** The one HTML page; everything else is drawn by /ui/app.js. */
export const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>twylt inspect</title>
<link rel="icon" href="${ICON}">
<link rel="stylesheet" href="/ui/app.css">
<script type="module" src="/ui/app.js"></script>
</head>
<body>
<div id="app"><p class="loading">Loading…</p></div>
<noscript>twylt inspect needs JavaScript to draw its page.</noscript>
</body>
</html>
`;

/** A refusal a person may see in the browser (a foreign Host or Origin): why, and what to do. */
export function refusalPage(reason: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>twylt inspect: refused</title></head>
<body><h1>twylt inspect: refused</h1>
<p>${escapeHtml(reason)}.</p><p>Open the page through the address <code>twylt inspect</code> printed.</p></body></html>
`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
