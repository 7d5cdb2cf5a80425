/**
 * The Prometheus text format the metrics endpoint serves (packages/twylt/src/observe/
 * registry.ts), rendered from the source: a value on a bucket's bound counts in that bucket
 * (`le` is "less than or equal"), buckets are cumulative, label values are escaped, an absent
 * label is left out. Pure functions, so each rule is one cheap table row (and mutation testing
 * runs them for every mutant of the registry: docs/mutation.md).
 */
import { describe, expect, it } from 'vitest';
import { Counter, Gauge, Histogram, Registry } from '../../packages/twylt/src/observe/registry.js';

/** The bucket counts a histogram renders, by `le`. */
function buckets(histogram: Histogram): Record<string, number> {
  const lines = histogram.render().split('\n').filter((line) => line.startsWith(`${histogram.name}_bucket`));
  return Object.fromEntries(lines.map((line) => [/le="([^"]+)"/.exec(line)![1]!, Number(line.slice(line.lastIndexOf(' ') + 1))]));
}

describe('a histogram', () => {
  const BOUNDS = [0.1, 1, 5];
  const cases: [string, number[], Record<string, number>][] = [
    ['a value exactly on a bound counts in that bucket (le is <=)', [1], { '0.1': 0, '1': 1, '5': 1, '+Inf': 1 }],
    ['on the lowest bound', [0.1], { '0.1': 1, '1': 1, '5': 1, '+Inf': 1 }],
    ['on the highest bound', [5], { '0.1': 0, '1': 0, '5': 1, '+Inf': 1 }],
    ['just above a bound counts in the next one', [1.000001], { '0.1': 0, '1': 0, '5': 1, '+Inf': 1 }],
    ['above every bound: only +Inf', [7], { '0.1': 0, '1': 0, '5': 0, '+Inf': 1 }],
    ['zero, and a negative value, count everywhere', [0, -1], { '0.1': 2, '1': 2, '5': 2, '+Inf': 2 }],
    ['cumulative over several values', [0.05, 0.1, 0.5, 1, 3, 9], { '0.1': 2, '1': 4, '5': 5, '+Inf': 6 }],
  ];
  for (const [name, values, expected] of cases) {
    it(name, () => {
      const histogram = new Histogram('h_seconds', 'help', [], BOUNDS);
      for (const value of values) histogram.observe({}, value);
      expect(buckets(histogram)).toEqual(expected);
      expect(histogram.render()).toContain(`h_seconds_count ${values.length}\n`);
      expect(histogram.render()).toContain(`h_seconds_sum ${values.reduce((a, b) => a + b, 0)}\n`);
    });
  }

  it('renders HELP, TYPE, every bucket in bound order, +Inf, sum and count, per label set', () => {
    const histogram = new Histogram('h_seconds', 'How long.', ['tool'], [0.5, 2]);
    histogram.observe({ tool: 'a' }, 0.5);
    histogram.observe({ tool: 'b' }, 3);
    expect(histogram.render()).toBe(
      [
        '# HELP h_seconds How long.',
        '# TYPE h_seconds histogram',
        'h_seconds_bucket{tool="a",le="0.5"} 1',
        'h_seconds_bucket{tool="a",le="2"} 1',
        'h_seconds_bucket{tool="a",le="+Inf"} 1',
        'h_seconds_sum{tool="a"} 0.5',
        'h_seconds_count{tool="a"} 1',
        'h_seconds_bucket{tool="b",le="0.5"} 0',
        'h_seconds_bucket{tool="b",le="2"} 0',
        'h_seconds_bucket{tool="b",le="+Inf"} 1',
        'h_seconds_sum{tool="b"} 3',
        'h_seconds_count{tool="b"} 1',
        '',
      ].join('\n'),
    );
  });
});

describe('counters, gauges and the registry', () => {
  it('a counter adds (1 by default), per label set, in the metric\'s label order', () => {
    const counter = new Counter('c_total', 'Calls.', ['b', 'a']);
    counter.inc({ a: 'x', b: 'y' });
    counter.inc({ a: 'x', b: 'y' }, 2);
    counter.inc({ a: 'z', b: 'y' });
    expect(counter.render()).toBe('# HELP c_total Calls.\n# TYPE c_total counter\nc_total{b="y",a="x"} 3\nc_total{b="y",a="z"} 1\n');
  });

  it('a counter without labels renders no braces; an absent or empty label is left out', () => {
    const plain = new Counter('p_total', 'P.');
    plain.inc();
    expect(plain.render()).toContain('\np_total 1\n');
    const absent = new Counter('q_total', 'Q.', ['tool', 'error_type']);
    absent.inc({ tool: 't' });
    expect(absent.render()).toContain('\nq_total{tool="t"} 1\n');
    const empty = new Counter('r_total', 'R.', ['error_type', 'tool']);
    empty.inc({ tool: 't', error_type: '' });
    expect(empty.render()).toContain('\nr_total{tool="t"} 1\n');
  });

  it('label values are escaped as Prometheus reads them: backslash, quote, newline', () => {
    const counter = new Counter('e_total', 'E.', ['v']);
    counter.inc({ v: 'a\\b"c\nd' });
    expect(counter.render()).toContain('e_total{v="a\\\\b\\"c\\nd"} 1\n');
  });

  it('a gauge is set and moved; infinities are +Inf and -Inf', () => {
    const gauge = new Gauge('g', 'G.', ['k']);
    gauge.set({ k: 'a' }, 5);
    gauge.add({ k: 'a' }, -2);
    gauge.add({ k: 'b' }, 1);
    gauge.set({ k: 'up' }, Number.POSITIVE_INFINITY);
    gauge.set({ k: 'down' }, Number.NEGATIVE_INFINITY);
    expect(gauge.render()).toBe('# HELP g G.\n# TYPE g gauge\ng{k="a"} 3\ng{k="b"} 1\ng{k="up"} +Inf\ng{k="down"} -Inf\n');
  });

  it('the registry renders its metrics in the order registered', () => {
    const registry = new Registry();
    registry.add(new Gauge('second', 'S.')).set({}, 1);
    registry.add(new Counter('first_total', 'F.')).inc();
    expect(registry.render()).toBe('# HELP second S.\n# TYPE second gauge\nsecond 1\n# HELP first_total F.\n# TYPE first_total counter\nfirst_total 1\n');
  });
});
