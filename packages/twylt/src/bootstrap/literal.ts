/**
 * The value of a source expression when it is written as a plain literal: a string, number,
 * boolean, null, a template string without substitutions, or an array/object of those.
 * Type-only wrappers (`as const`, `satisfies T`, `!`, `<T>x`) are looked through.
 */
import type * as t from '@babel/types';

export type LiteralResult = { ok: true; value: unknown } | { ok: false; node: t.Node; why: string };

class NotLiteral {
  constructor(
    readonly node: t.Node,
    readonly why: string,
  ) {}
}

export function literalValue(node: t.Node): LiteralResult {
  try {
    return { ok: true, value: evaluate(node) };
  } catch (error) {
    if (error instanceof NotLiteral) return { ok: false, node: error.node, why: error.why };
    throw error;
  }
}

/** Type wrappers that change nothing at run time. */
export function unwrapTypes(node: t.Node): t.Node {
  let current = node;
  while (
    current.type === 'TSAsExpression' ||
    current.type === 'TSSatisfiesExpression' ||
    current.type === 'TSNonNullExpression' ||
    current.type === 'TSTypeAssertion' ||
    current.type === 'ParenthesizedExpression'
  ) {
    current = current.expression;
  }
  return current;
}

function evaluate(input: t.Node): unknown {
  const node = unwrapTypes(input);
  switch (node.type) {
    case 'StringLiteral':
    case 'NumericLiteral':
    case 'BooleanLiteral':
      return node.value;
    case 'NullLiteral':
      return null;
    case 'TemplateLiteral':
      if (node.expressions.length > 0) throw new NotLiteral(node, 'a template string with substitutions');
      return node.quasis[0].value.cooked;
    case 'UnaryExpression': {
      const operand = unwrapTypes(node.argument);
      if ((node.operator === '-' || node.operator === '+') && operand.type === 'NumericLiteral') {
        return node.operator === '-' ? -operand.value : operand.value;
      }
      throw new NotLiteral(node, 'an expression');
    }
    case 'ArrayExpression':
      return node.elements.map((element) => {
        if (element === null) throw new NotLiteral(node, 'an array with holes');
        if (element.type === 'SpreadElement') throw new NotLiteral(element, 'a spread');
        return evaluate(element);
      });
    case 'ObjectExpression': {
      const out: Record<string, unknown> = {};
      for (const property of node.properties) {
        if (property.type !== 'ObjectProperty') throw new NotLiteral(property, property.type === 'SpreadElement' ? 'a spread' : 'a method');
        const key = propertyKey(property);
        if (key === undefined) throw new NotLiteral(property, 'a computed key');
        if (key === '__proto__') throw new NotLiteral(property, 'a __proto__ key');
        out[key] = evaluate(property.value);
      }
      return out;
    }
    case 'Identifier':
      throw new NotLiteral(node, `the identifier \`${node.name}\``);
    case 'CallExpression':
    case 'NewExpression':
      throw new NotLiteral(node, 'a call');
    default:
      throw new NotLiteral(node, 'an expression');
  }
}

/** The name of a non-computed key: `name`, `'name'`, `1`; undefined for computed keys. */
export function propertyKey(member: { key: t.Node; computed?: boolean }): string | undefined {
  if (member.computed) return undefined;
  const key = member.key;
  if (key.type === 'Identifier') return key.name;
  if (key.type === 'StringLiteral') return key.value;
  if (key.type === 'NumericLiteral') return String(key.value);
  return undefined;
}
