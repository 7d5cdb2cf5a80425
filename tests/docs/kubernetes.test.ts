/**
 * The Kubernetes example (docs/deploy/kubernetes/twylt-mcp.yaml, shown whole in docs/mcp.md)
 * checked without a cluster: each document against the Kubernetes JSON schema of its kind
 * (kubernetes-models, offline), the bridge's arguments through the bridge's own parser, and
 * the numbers that must agree with each other (grace, ports, affinity, body size, time-outs).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Deployment } from 'kubernetes-models/apps/v1';
import { Ingress } from 'kubernetes-models/networking.k8s.io/v1';
import { Service } from 'kubernetes-models/v1';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { parseCli } from '../../packages/twylt-mcp/dist/args.js';
import { ROOT } from '../support/process.js';
import { blocksUnder, readDoc } from './markdown.js';

const FILE = 'docs/deploy/kubernetes/twylt-mcp.yaml';
const text = readFileSync(join(ROOT, FILE), 'utf8');

function manifests(source: string): Array<Record<string, any>> {
  const documents = parseAllDocuments(source);
  for (const document of documents) if (document.errors.length > 0) throw new Error(document.errors.map((error) => error.message).join('\n'));
  return documents.map((document) => document.toJSON() as Record<string, any>);
}

const MODELS: Record<string, (json: any) => { validate(): void }> = {
  'apps/v1 Deployment': (json) => new Deployment(json),
  'v1 Service': (json) => new Service(json),
  'networking.k8s.io/v1 Ingress': (json) => new Ingress(json),
};

/** Throws unless each manifest is valid for the schema of its apiVersion and kind. */
function validateAll(all: Array<Record<string, any>>): void {
  for (const manifest of all) {
    const model = MODELS[`${manifest.apiVersion} ${manifest.kind}`];
    if (!model) throw new Error(`unexpected ${manifest.apiVersion} ${manifest.kind}`);
    model(manifest).validate();
  }
}

describe('the Kubernetes example', () => {
  const all = manifests(text);
  const byKind = Object.fromEntries(all.map((manifest) => [manifest.kind, manifest])) as Record<string, Record<string, any>>;
  const pod = byKind.Deployment!.spec.template.spec;
  const container = pod.containers[0];

  it('is shown whole in docs/mcp.md', () => {
    const blocks = blocksUnder(readDoc('docs/mcp.md'), 'Running N replicas behind a load balancer', 'yaml');
    expect(blocks.map((block) => block.body)).toContain(text);
  });

  it('is a Deployment, a Service and an Ingress, each valid for its schema', () => {
    expect(all.map((manifest) => `${manifest.apiVersion} ${manifest.kind}`)).toEqual(Object.keys(MODELS));
    expect(() => validateAll(all)).not.toThrow();
  });

  it('the schema check does fail on a broken manifest', () => {
    const broken = manifests(text.replace('terminationGracePeriodSeconds: 40', 'terminationGracePeriodSeconds: "forty"'));
    expect(() => validateAll(broken)).toThrow(/terminationGracePeriodSeconds/);
    const misspelt = manifests(text.replace('apiVersion: networking.k8s.io/v1', 'apiVersion: networking.k8s.io/v1beta1'));
    expect(() => validateAll(misspelt)).toThrow(/unexpected networking.k8s.io\/v1beta1 Ingress/);
  });

  it("the bridge's arguments parse, and the grace outlasts preStop plus --grace-ms", () => {
    const plan = parseCli([...container.args, '--', 'tool']);
    expect(plan.http).toMatchObject({ host: '0.0.0.0', port: 8080, graceMs: 25_000 });
    const preStopSeconds = Number(container.lifecycle.preStop.exec.command[1]);
    expect(pod.terminationGracePeriodSeconds * 1000).toBeGreaterThan(preStopSeconds * 1000 + plan.http!.graceMs!);
    expect(container.env).toContainEqual({ name: 'TWYLT_MCP_TOKEN', valueFrom: { secretKeyRef: { name: 'twylt-mcp', key: 'token' } } });
  });

  it('probes hit /healthz on the port the bridge listens on; the Service and the Ingress reach that port', () => {
    const port = container.ports.find((each: { name: string }) => each.name === 'http');
    expect(port.containerPort).toBe(parseCli([...container.args, '--', 'tool']).http!.port);
    for (const probe of [container.readinessProbe, container.livenessProbe]) expect(probe.httpGet).toEqual({ path: '/healthz', port: 'http' });
    const service = byKind.Service!;
    expect(service.spec.selector).toEqual(byKind.Deployment!.spec.template.metadata.labels);
    expect(service.spec.ports).toEqual([{ name: 'http', port: 80, targetPort: 'http' }]);
    const path = byKind.Ingress!.spec.rules[0].http.paths[0];
    expect(path).toMatchObject({ path: '/mcp', pathType: 'Exact', backend: { service: { name: service.metadata.name, port: { name: 'http' } } } });
  });

  it('the ingress keeps a client on one pod by its Mcp-Session-Id, streams, and allows what the bridge allows', () => {
    const plan = parseCli([...container.args, '--', 'tool']);
    const annotations = byKind.Ingress!.metadata.annotations;
    expect(annotations['nginx.ingress.kubernetes.io/upstream-hash-by']).toBe('$http_mcp_session_id');
    expect(annotations['nginx.ingress.kubernetes.io/proxy-buffering']).toBe('off');
    expect(Number(annotations['nginx.ingress.kubernetes.io/proxy-read-timeout']) * 1000).toBeGreaterThan(plan.defaults.timeoutMs!);
    expect(annotations['nginx.ingress.kubernetes.io/proxy-body-size']).toBe('4m');
    expect(plan.http!.maxBodyBytes ?? 4 * 1024 * 1024).toBe(4 * 1024 * 1024);
  });
});
