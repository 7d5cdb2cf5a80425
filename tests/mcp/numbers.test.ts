/**
 * The bridge passes a foreign tool's numbers through as the tool printed them, in
 * structuredContent and in the text block alike. Read on the wire: the raw JSON-RPC line,
 * not a client's parse of it (which would round them again).
 */
import { describe, expect, it } from 'vitest';
import { INITIALIZE, INITIALIZED, rawExchange } from '../support/mcp.js';
import { NO_PYTHON_REASON, noPython, pythonNumbersTool } from '../support/python.js';

describe.skipIf(noPython)(`numbers through twylt-mcp, on the wire (${noPython ? NO_PYTHON_REASON : 'python3'})`, () => {
  it('structuredContent and the text block carry the tool’s digits unchanged', async () => {
    const call = { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'py_numbers', arguments: { n: 0.5 } } };
    const answers = await rawExchange(['--', ...pythonNumbersTool()], [INITIALIZE, INITIALIZED, call]);
    const line = answers.get(2)!;
    expect(line).toMatch(/^\{"result":\{/);
    const numbers =
      '"modified_ns":1796084204906049009,"negative":-1796084204906049009,"beyond_64_bits":123456789012345678901234567890,' +
      '"tenth":0.1,"tiny":1e-07,"whole":1.0,"large":1e+16,"third":0.3333333333333333,"small_int":42';
    expect(line).toContain(`"structuredContent":{"echo":0.5,${numbers}}`);
    // The text block is the same JSON, as a JSON string.
    expect(line).toContain(JSON.stringify(`{"echo":0.5,${numbers}}`));
  });

  it('passes a client’s numbers to the tool unchanged', async () => {
    const lines = [JSON.stringify(INITIALIZE), JSON.stringify(INITIALIZED)];
    const requests = ['98765432109876543210', '-1e-07', '1.0'].map(
      (n, i) => `{"jsonrpc":"2.0","id":${i + 2},"method":"tools/call","params":{"name":"py_numbers","arguments":{"n":${n}}}}`,
    );
    const answers = await rawExchange(['--', ...pythonNumbersTool()], [...lines, ...requests]);
    expect(answers.get(2)).toContain('"structuredContent":{"echo":98765432109876543210,');
    expect(answers.get(3)).toContain('"structuredContent":{"echo":-1e-07,');
    expect(answers.get(4)).toContain('"structuredContent":{"echo":1.0,');
  });
});
