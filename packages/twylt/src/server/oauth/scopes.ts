/**
 * Scopes: how a token lists them, and the per-tool convention: a tool needs `tools:NAME`,
 * and `tools:*` grants every tool (ADR 0027, ADR 0036).
 */
import type { Caller } from '../authenticator.js';

export const ALL_TOOLS_SCOPE = 'tools:*';

/** The longest tool name that gets a scope of its own: a header and a log line stay small. */
export const MAX_SCOPED_NAME_CHARS = 128;

/** A scope token (RFC 6749 section 3.3): printable ASCII, no space, quote or backslash. */
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/;

/** Whether `word` can be written as a scope (in a token, a header, a consent page). */
export function isScopeToken(word: string): boolean {
  return SCOPE_TOKEN.test(word);
}

/**
 * The scope that grants the tool `name`, or undefined when the name cannot be one (a
 * character outside printable ASCII, a space, a quote, or more than MAX_SCOPED_NAME_CHARS):
 * such a tool is reached with `tools:*` only.
 */
export function toolScope(name: string): string | undefined {
  return name.length <= MAX_SCOPED_NAME_CHARS && isScopeToken(name) ? `tools:${name}` : undefined;
}

/**
 * Whether `caller` may see and call the tool `name`. A caller without scopes (a shared
 * token) may call every tool; per-tool access is for credentials that carry scopes.
 */
export function mayCallTool(caller: Caller, name: string): boolean {
  if (caller.scopes === undefined) return true;
  const scope = toolScope(name);
  return caller.scopes.includes(ALL_TOOLS_SCOPE) || (scope !== undefined && caller.scopes.includes(scope));
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
