/**
 * Warm against cold through twylt-mcp over stdio (ADR 0026), for one tool: two bridges side
 * by side, one with `--warm K` and one without, their tools/call latencies measured
 * alternately in one run (the machine's load falls on both alike), then throughput: K calls
 * at once, cold and warm batches alternating. Shared by bench/warm.mjs and
 * bench/launcher-warm.mjs.
 */
import { median } from './measure.mjs';
import { elapsedMs, stdioBridge } from './stdio-bridge.mjs';

const percentile = (values, p) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((p / 100) * values.length))];

/**
 * One row: `{tool, cold: {p50, p99, callsPerSecond}, warm: {...}, p50Ratio, throughputRatio}`,
 * or `{tool, unavailable}` when a bridge cannot start. `args` serve the tool (a command after
 * `--`, or `--config FILE`).
 */
export async function compareWarm({ label, args, name, input, rounds, concurrency, batches }) {
  let cold;
  let warm;
  try {
    cold = await stdioBridge(args, { name });
    warm = await stdioBridge(['--warm', String(concurrency), ...args], { name });
  } catch (error) {
    await cold?.close();
    return { tool: label, unavailable: `n/a (${error.message.split('\n')[0]})` };
  }
  const samples = { cold: [], warm: [] };
  const paths = [
    ['cold', cold],
    ['warm', warm],
  ];
  for (const [, path] of paths) await path.call(input); // a first call each, and a check
  for (let round = 0; round < rounds; round++) {
    for (let k = 0; k < 2; k++) {
      const [id, path] = paths[(k + round) % 2];
      samples[id].push(await path.call(input));
    }
  }
  const batchMs = { cold: [], warm: [] };
  for (let batch = 0; batch < batches; batch++) {
    for (let k = 0; k < 2; k++) {
      const [id, path] = paths[(k + batch) % 2];
      batchMs[id].push(await elapsedMs(() => Promise.all(Array.from({ length: concurrency }, () => path.call(input)))));
    }
  }
  await cold.close();
  await warm.close();
  const row = { tool: label };
  for (const id of ['cold', 'warm']) {
    const total = batchMs[id].reduce((sum, ms) => sum + ms, 0);
    row[id] = { p50: median(samples[id]), p99: percentile(samples[id], 99), callsPerSecond: (concurrency * batches * 1000) / total };
  }
  row.p50Ratio = row.warm.p50 / row.cold.p50;
  row.throughputRatio = row.warm.callsPerSecond / row.cold.callsPerSecond;
  return row;
}

/** The rows as the Markdown table docs/performance.md shows. */
export function warmTable(results) {
  const ms = (value) => `${value.toFixed(1)} ms`;
  let text = '| tool | cold p50 | cold p99 | warm p50 | warm p99 | warm/cold p50 | cold calls/s | warm calls/s |\n|---|---|---|---|---|---|---|---|\n';
  for (const row of results) {
    if (row.unavailable) text += `| ${row.tool} | ${row.unavailable} | | | | | | |\n`;
    else
      text += `| ${row.tool} | ${ms(row.cold.p50)} | ${ms(row.cold.p99)} | ${ms(row.warm.p50)} | ${ms(row.warm.p99)} | ${row.p50Ratio.toFixed(2)}x | ${row.cold.callsPerSecond.toFixed(1)} | ${row.warm.callsPerSecond.toFixed(1)} |\n`;
  }
  return text;
}
