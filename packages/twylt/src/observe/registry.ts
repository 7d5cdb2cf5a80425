/**
 * Counters, gauges and histograms, and the Prometheus text format (version 0.0.4) they are
 * scraped in. Hand-written on purpose (ADR 0033): a few dozen lines cost nothing to load,
 * where a metrics SDK would be loaded into every observed bridge for the same text.
 */

type Labels = Record<string, string | undefined>;

interface Metric {
  readonly name: string;
  render(): string;
}

/** A label value as Prometheus reads it: backslash, quote and newline escaped. */
function escapeValue(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

/** `{a="x",b="y"}` in the metric's label order; an absent label is left out, as OTel's exporter does. */
function labelText(names: readonly string[], values: readonly (string | undefined)[], extra = ''): string {
  const parts = names.flatMap((name, i) => (values[i] === undefined || values[i] === '' ? [] : [`${name}="${escapeValue(values[i]!)}"`]));
  if (extra) parts.push(extra);
  return parts.length === 0 ? '' : `{${parts.join(',')}}`;
}

/** A number as Prometheus writes it. */
function num(value: number): string {
  if (value === Number.POSITIVE_INFINITY) return '+Inf';
  if (value === Number.NEGATIVE_INFINITY) return '-Inf';
  return String(value);
}

abstract class Series<V> implements Metric {
  readonly #series = new Map<string, { values: (string | undefined)[]; value: V }>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labels: readonly string[],
    readonly type: 'counter' | 'gauge' | 'histogram',
  ) {}

  protected abstract fresh(): V;

  protected at(labels: Labels): V {
    const values = this.labels.map((name) => labels[name]);
    const key = JSON.stringify(values);
    let entry = this.#series.get(key);
    if (!entry) this.#series.set(key, (entry = { values, value: this.fresh() }));
    return entry.value;
  }

  protected abstract lines(labels: readonly (string | undefined)[], value: V): string[];

  render(): string {
    const head = `# HELP ${this.name} ${this.help}\n# TYPE ${this.name} ${this.type}\n`;
    const body = [...this.#series.values()].flatMap(({ values, value }) => this.lines(values, value));
    return head + body.map((line) => `${line}\n`).join('');
  }
}

export class Counter extends Series<{ n: number }> {
  constructor(name: string, help: string, labels: readonly string[] = []) {
    super(name, help, labels, 'counter');
  }
  protected fresh() {
    return { n: 0 };
  }
  inc(labels: Labels = {}, by = 1): void {
    this.at(labels).n += by;
  }
  protected lines(values: readonly (string | undefined)[], value: { n: number }): string[] {
    return [`${this.name}${labelText(this.labels, values)} ${num(value.n)}`];
  }
}

export class Gauge extends Series<{ n: number }> {
  constructor(name: string, help: string, labels: readonly string[] = []) {
    super(name, help, labels, 'gauge');
  }
  protected fresh() {
    return { n: 0 };
  }
  set(labels: Labels, value: number): void {
    this.at(labels).n = value;
  }
  add(labels: Labels, by: number): void {
    this.at(labels).n += by;
  }
  protected lines(values: readonly (string | undefined)[], value: { n: number }): string[] {
    return [`${this.name}${labelText(this.labels, values)} ${num(value.n)}`];
  }
}

interface Buckets {
  counts: number[];
  sum: number;
  count: number;
}

export class Histogram extends Series<Buckets> {
  readonly bounds: readonly number[];

  constructor(name: string, help: string, labels: readonly string[], bounds: readonly number[]) {
    super(name, help, labels, 'histogram');
    this.bounds = bounds;
  }
  protected fresh(): Buckets {
    return { counts: this.bounds.map(() => 0), sum: 0, count: 0 };
  }
  observe(labels: Labels, value: number): void {
    const buckets = this.at(labels);
    // Cumulative as exposed: each bucket counts every value at or below its bound.
    for (let i = 0; i < this.bounds.length; i++) if (value <= this.bounds[i]!) buckets.counts[i]!++;
    buckets.sum += value;
    buckets.count++;
  }
  protected lines(values: readonly (string | undefined)[], value: Buckets): string[] {
    const out = this.bounds.map((bound, i) => `${this.name}_bucket${labelText(this.labels, values, `le="${num(bound)}"`)} ${value.counts[i]}`);
    out.push(`${this.name}_bucket${labelText(this.labels, values, 'le="+Inf"')} ${value.count}`);
    out.push(`${this.name}_sum${labelText(this.labels, values)} ${num(value.sum)}`);
    out.push(`${this.name}_count${labelText(this.labels, values)} ${value.count}`);
    return out;
  }
}

/** The metrics one endpoint serves, in the order registered. */
export class Registry {
  readonly #metrics: Metric[] = [];

  add<M extends Metric>(metric: M): M {
    this.#metrics.push(metric);
    return metric;
  }

  render(): string {
    return this.#metrics.map((metric) => metric.render()).join('');
  }
}
