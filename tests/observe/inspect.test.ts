/** `twylt inspect --metrics`: the page's calls counted per tool, as the bridge counts them. */
import { describe, expect, it } from 'vitest';
import { send, startInspect } from '../inspect/support.js';
import { SLEEPER } from '../support/mcp.js';

const METRICS = /^twylt inspect: metrics at (http:\/\/127\.0\.0\.1:(\d+)\/metrics)$/m;

describe('twylt inspect --metrics', () => {
  it('counts the calls made from the page, per tool and failure kind', async () => {
    const inspect = await startInspect(['--metrics', '127.0.0.1:0', '--', ...SLEEPER]);
    try {
      const port = Number(METRICS.exec(inspect.stderr())?.[2]);
      expect(port).toBeGreaterThan(0);
      const call = (action: string) =>
        send(inspect.port, {
          method: 'POST',
          path: '/api/call',
          headers: { authorization: `Bearer ${inspect.token}`, origin: inspect.origin, 'content-type': 'application/json', 'sec-fetch-site': 'same-origin' },
          body: JSON.stringify({ tool: 'sleeper', input: { action } }),
        });
      expect((await call('wait')).status).toBe(200);
      expect((await call('fail')).status).toBe(200);
      const text = (await send(port, { path: '/metrics' })).body;
      expect(text).toContain('twylt_tool_calls_total{gen_ai_tool_name="sleeper"} 1\n');
      expect(text).toContain('twylt_tool_calls_total{gen_ai_tool_name="sleeper",error_type="failed"} 1\n');
      expect(text).toContain('twylt_tool_exits_total{gen_ai_tool_name="sleeper",exit_code="5"} 1\n');
    } finally {
      await inspect.stop();
    }
  }, 60_000);

  it('refuses a binding beyond loopback (it has no token for scrapes)', async () => {
    await expect(startInspect(['--metrics', '0.0.0.0:0', '--', ...SLEEPER])).rejects.toThrow(/cannot start: refusing to listen on 0\.0\.0\.0 without a token/);
  }, 60_000);
});
