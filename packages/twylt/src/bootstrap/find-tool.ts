/**
 * Finds THE tool of a module in its syntax tree: a class that extends `Tool` from 'twylt'
 * (directly or through other classes of the same file), or the object passed to
 * `defineTool(...)`. Other classes, however their fields are named, are not the tool.
 * Among several candidates the one whose `run()` is called wins, then an exported one,
 * then the most derived class; a remaining tie goes to the first in the source.
 */
import type * as t from '@babel/types';
import { isMetadataField, type MetadataField } from './fields.js';
import { propertyKey, unwrapTypes } from './literal.js';

/** Something the reader could not take from the source, with where it stands. */
export interface Note {
  node: t.Node;
  message: string;
}

export interface ToolSource {
  /** `class Name` or `defineTool(...)`, for messages. */
  label: string;
  node: t.Node;
  /** Each declared field's value expression; null when declared in a form that is never a literal (a getter, a method). */
  fields: Map<MetadataField, t.Node | null>;
}

const TWYLT = 'twylt';

interface ClassInfo {
  node: t.Class;
  name: string | undefined;
}

interface Candidate {
  label: string;
  node: t.Node;
  /** Reads the fields; run for the chosen candidate only, so notes concern the tool alone. */
  fields: (notes: Note[]) => ToolSource['fields'];
  run: boolean;
  exported: boolean;
  leaf: boolean;
}

export function findTool(program: t.Program, notes: Note[]): ToolSource | undefined {
  const refs = twyltBindings(program);
  const facts = collect(program, refs);

  const byName = new Map<string, ClassInfo>();
  for (const info of facts.classes) if (info.name !== undefined) byName.set(info.name, info);

  /** The class chain from the class right under Tool down to `info`, or undefined when Tool is not an ancestor. */
  const chainOf = (info: ClassInfo, seen = new Set<ClassInfo>()): ClassInfo[] | undefined => {
    const parent = info.node.superClass ? unwrapTypes(info.node.superClass) : undefined;
    if (!parent || seen.has(info)) return undefined;
    if (refs.isTool(parent)) return [info];
    const base = parent.type === 'Identifier' ? byName.get(parent.name) : undefined;
    const chain = base && chainOf(base, seen.add(info));
    return chain && [...chain, info];
  };

  const candidates: Candidate[] = [];
  const chains = new Map<ClassInfo, ClassInfo[]>();
  for (const info of facts.classes) {
    const chain = chainOf(info);
    if (chain) chains.set(info, chain);
  }
  const extended = new Set([...chains.values()].flatMap((chain) => chain.slice(0, -1)));
  for (const [info, chain] of chains) {
    candidates.push({
      label: `class ${info.name ?? '(anonymous)'}`,
      node: info.node,
      fields: (found) => classFields(chain, found),
      run: info.name !== undefined && facts.runNames.has(info.name),
      exported: facts.exportedNodes.has(info.node) || (info.name !== undefined && facts.exportedNames.has(info.name)),
      leaf: !extended.has(info),
    });
  }
  for (const call of facts.defineCalls) {
    const names = facts.namesOf.get(call) ?? [];
    candidates.push({
      label: 'defineTool(...)',
      node: call,
      fields: (found) => defineToolFields(call, found),
      run: facts.runCalls.has(call) || names.some((name) => facts.runNames.has(name)),
      exported: facts.exportedNodes.has(call) || names.some((name) => facts.exportedNames.has(name)),
      leaf: true,
    });
  }
  candidates.sort((a, b) => (a.node.start ?? 0) - (b.node.start ?? 0));

  const ranked = [candidates.filter((c) => c.run), candidates.filter((c) => c.exported), candidates.filter((c) => c.leaf)];
  const best = ranked.find((group) => group.length > 0) ?? [];
  const chosen = best[0];
  if (!chosen) return undefined;
  if (best.length > 1) notes.push({ node: best[1].node, message: `${best.length} tools found; reading the first, ${chosen.label}` });
  return { label: chosen.label, node: chosen.node, fields: chosen.fields(notes) };
}

/** Local names under which the module imports `Tool` and `defineTool` from 'twylt'. */
function twyltBindings(program: t.Program) {
  const tools = new Set<string>();
  const defines = new Set<string>();
  const namespaces = new Set<string>();
  for (const statement of program.body) {
    if (statement.type !== 'ImportDeclaration' || statement.source.value !== TWYLT || statement.importKind === 'type') continue;
    for (const specifier of statement.specifiers) {
      if (specifier.type === 'ImportNamespaceSpecifier') namespaces.add(specifier.local.name);
      if (specifier.type !== 'ImportSpecifier' || specifier.importKind === 'type') continue;
      const imported = specifier.imported.type === 'Identifier' ? specifier.imported.name : specifier.imported.value;
      if (imported === 'Tool') tools.add(specifier.local.name);
      if (imported === 'defineTool') defines.add(specifier.local.name);
    }
  }
  const refersTo = (node: t.Node, locals: Set<string>, exported: string): boolean =>
    (node.type === 'Identifier' && locals.has(node.name)) ||
    (node.type === 'MemberExpression' &&
      node.object.type === 'Identifier' &&
      namespaces.has(node.object.name) &&
      propertyKey({ key: node.property, computed: node.computed }) === exported);
  return {
    isTool: (node: t.Node) => refersTo(node, tools, 'Tool'),
    isDefineTool: (node: t.Node) => refersTo(node, defines, 'defineTool'),
  };
}

interface Facts {
  classes: ClassInfo[];
  defineCalls: t.CallExpression[];
  /** Names on which `.run()` is called: `MyTool.run()`, `tool.run()`. */
  runNames: Set<string>;
  /** defineTool calls on which `.run()` is called directly. */
  runCalls: Set<t.Node>;
  exportedNames: Set<string>;
  /** Anonymous default exports: `export default class extends Tool`, `export default defineTool(...)`. */
  exportedNodes: Set<t.Node>;
  /** Variables a defineTool call is assigned to. */
  namesOf: Map<t.Node, string[]>;
}

function collect(program: t.Program, refs: ReturnType<typeof twyltBindings>): Facts {
  const facts: Facts = {
    classes: [],
    defineCalls: [],
    runNames: new Set(),
    runCalls: new Set(),
    exportedNames: new Set(),
    exportedNodes: new Set(),
    namesOf: new Map(),
  };
  walk(program, (node, parent) => {
    switch (node.type) {
      case 'ClassDeclaration':
      case 'ClassExpression': {
        const bound = parent?.type === 'VariableDeclarator' && parent.id.type === 'Identifier' ? parent.id.name : undefined;
        facts.classes.push({ node, name: node.id?.name ?? bound });
        break;
      }
      case 'CallExpression': {
        if (refs.isDefineTool(node.callee)) facts.defineCalls.push(node);
        const callee = node.callee;
        if (callee.type === 'MemberExpression' && propertyKey({ key: callee.property, computed: callee.computed }) === 'run') {
          const target = unwrapTypes(callee.object);
          if (target.type === 'Identifier') facts.runNames.add(target.name);
          else facts.runCalls.add(target);
        }
        break;
      }
      case 'VariableDeclarator': {
        const init = node.init && unwrapTypes(node.init);
        if (node.id.type === 'Identifier' && init?.type === 'CallExpression') {
          facts.namesOf.set(init, [...(facts.namesOf.get(init) ?? []), node.id.name]);
        }
        break;
      }
      case 'ExportNamedDeclaration': {
        const declaration = node.declaration;
        if (declaration?.type === 'ClassDeclaration' && declaration.id) facts.exportedNames.add(declaration.id.name);
        if (declaration?.type === 'VariableDeclaration') {
          for (const declarator of declaration.declarations) {
            if (declarator.id.type === 'Identifier') facts.exportedNames.add(declarator.id.name);
          }
        }
        for (const specifier of node.specifiers) {
          if (specifier.type === 'ExportSpecifier') facts.exportedNames.add(specifier.local.name);
        }
        break;
      }
      case 'ExportDefaultDeclaration': {
        const declaration = unwrapTypes(node.declaration);
        if (declaration.type === 'Identifier') facts.exportedNames.add(declaration.name);
        else facts.exportedNodes.add(declaration);
        break;
      }
    }
  });
  return facts;
}

function classFields(chain: ClassInfo[], notes: Note[]): ToolSource['fields'] {
  const fields: ToolSource['fields'] = new Map();
  for (const link of chain) {
    for (const member of link.node.body.body) {
      if (member.type !== 'ClassProperty' && member.type !== 'ClassMethod' && member.type !== 'ClassAccessorProperty') continue;
      const key = propertyKey(member);
      if (!isMetadataField(key)) continue;
      if (member.type === 'ClassProperty' && !member.static) {
        if (member.value) fields.set(key, member.value); // `declare name: string` has none
        continue;
      }
      const form = member.static ? 'a static member' : member.type === 'ClassMethod' ? `a ${member.kind === 'get' ? 'getter' : 'method'}` : 'an accessor';
      notes.push({ node: member, message: `${key} is declared as ${form}, which is not read; only instance fields with literal values are` });
      if (!member.static) fields.set(key, null); // it hides any value a base class gave
    }
  }
  return fields;
}

function defineToolFields(call: t.CallExpression, notes: Note[]): ToolSource['fields'] {
  const fields: ToolSource['fields'] = new Map();
  const argument = call.arguments[0] && unwrapTypes(call.arguments[0]);
  if (argument?.type !== 'ObjectExpression') {
    notes.push({ node: argument ?? call, message: 'defineTool is not given an object literal, so no field is read' });
    return fields;
  }
  for (const property of argument.properties) {
    if (property.type === 'SpreadElement') {
      notes.push({ node: property, message: 'fields inside a spread are not read' });
      continue;
    }
    const key = propertyKey(property);
    if (!isMetadataField(key)) continue;
    if (property.type === 'ObjectProperty') {
      fields.set(key, property.value);
    } else {
      notes.push({ node: property, message: `${key} is declared as a method, which is not read` });
      fields.set(key, null);
    }
  }
  return fields;
}

/** Visits every node once, parents before children. */
function walk(root: t.Node, visit: (node: t.Node, parent: t.Node | undefined) => void): void {
  const stack: [t.Node, t.Node | undefined][] = [[root, undefined]];
  while (stack.length > 0) {
    const [node, parent] = stack.pop()!;
    visit(node, parent);
    for (const key of Object.keys(node)) {
      if (key === 'loc' || key.endsWith('Comments') || key === 'extra') continue;
      const value = (node as unknown as Record<string, unknown>)[key];
      const children = Array.isArray(value) ? value : [value];
      for (let i = children.length - 1; i >= 0; i--) {
        const child = children[i];
        if (isNode(child)) stack.push([child, node]);
      }
    }
  }
}

function isNode(value: unknown): value is t.Node {
  return typeof value === 'object' && value !== null && typeof (value as { type?: unknown }).type === 'string';
}
