/**
 * `twylt inspect --warm` as a real process: the page's calls are served by warm processes
 * (stdin preselected), a reload retires them and starts fresh ones for the tools as
 * described again, and none outlives the server.
 */
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { send, startInspect, type Reply } from '../inspect/support.js';
import { waitFor } from '../support/mcp.js';
import { fixture } from '../support/process.js';
import { isReadingStdin, waitGone } from '../support/processes.js';

const dir = mkdtempSync(join(tmpdir(), 'twylt-inspect-warm-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const waiting = () =>
  readdirSync(dir)
    .filter((name) => name.startsWith('started-'))
    .map((name) => Number(name.slice('started-'.length)))
    .filter(isReadingStdin);

describe('twylt inspect --warm', () => {
  it('serves calls from warm processes, starts fresh ones on reload, and leaves none behind', async () => {
    writeFileSync(join(dir, 'tools.json'), JSON.stringify({ tools: [{ command: fixture('warm_probe'), env: { WARM_PROBE_DIR: dir } }] }));
    const inspect = await startInspect(['--config', join(dir, 'tools.json'), '--warm', '2']);
    const seen = new Set<number>();
    try {
      // The page's credential: a bearer header on /api (ADR 0030).
      const auth = { authorization: `Bearer ${inspect.token}` };
      const json = (reply: Reply) => JSON.parse(reply.body);
      const post = (path: string, body: unknown) =>
        send(inspect.port, {
          method: 'POST',
          path,
          headers: { ...auth, origin: inspect.origin, 'content-type': 'application/json', 'sec-fetch-site': 'same-origin' },
          body: JSON.stringify(body),
        });

      await waitFor(() => waiting().length >= 2, 'two warm processes', 30_000);
      const first = waiting();
      for (const pid of first) seen.add(pid);
      const tools = json(await send(inspect.port, { path: '/api/tools', headers: auth }));
      expect(tools.tools[0]).toMatchObject({ name: 'warm_probe', transport: 'stdin' });

      const record = json(await post('/api/call', { tool: 'warm_probe', input: { note: 'page' } }));
      expect(record).toMatchObject({ ok: true, transport: 'stdin' });
      expect(first).toContain(JSON.parse(record.output.text).pid);

      expect((await post('/api/reload', {})).status).toBe(200);
      for (const pid of first) expect(await waitGone(pid, 15_000)).toBe(true);
      await waitFor(() => waiting().filter((pid) => !seen.has(pid)).length >= 2, 'two fresh warm processes', 30_000);
      for (const pid of waiting()) seen.add(pid);
    } finally {
      const { code } = await inspect.stop();
      expect(code).toBe(0);
    }
    for (const pid of seen) expect(await waitGone(pid, 15_000)).toBe(true);
    expect(readdirSync(dir).filter((name) => name.startsWith('ran-'))).toHaveLength(1);
  });
});
