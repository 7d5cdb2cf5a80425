/**
 * Scopes: how a token lists them, and the per-tool convention: a tool needs `tools:NAME`,
 * and `tools:*` grants every tool (ADR 0027).
 */
import type { Caller } from '../authenticator.js';

export const ALL_TOOLS_SCOPE = 'tools:*';

/** The scope that grants the tool `name`. */
export function toolScope(name: string): string {
  return `tools:${name}`;
}

/**
 * Whether `caller` may see and call the tool `name`. A caller without scopes (a shared
 * token) may call every tool; per-tool access is for credentials that carry scopes.
 */
export function mayCallTool(caller: Caller, name: string): boolean {
  if (caller.scopes === undefined) return true;
  return caller.scopes.includes(ALL_TOOLS_SCOPE) || caller.scopes.includes(toolScope(name));
}

/**
 * The scopes of a token's claims or an introspection answer: `scope`, a space-separated
 * string (RFC 9068, RFC 7662), or `scp`, an array or a string (Entra ID, Okta).
 */
export function scopesOf(claims: Record<string, unknown>): string[] {
  const words = (value: unknown): string[] =>
    typeof value === 'string' ? value.split(' ').filter(Boolean) : Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
  return [...new Set([...words(claims.scope), ...words(claims.scp)])];
}
