/**
 * The rules of packages/twylt/src/server/access.ts as table rows on plain request objects:
 * the Host and Origin checks and their refusals, where a token may come from (the Bearer
 * header's exact form, the cookie, the query) and which loopback names count. The server-level
 * behaviour is in access.test.ts; these rows are what mutation testing (docs/mutation.md)
 * needed to kill the module's mutants.
 */
import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { checkAccess, hostsFor, isLoopback, tokenOf, type AccessPolicy } from '../../packages/twylt/src/server/access.js';

const request = (headers: Record<string, string>, url = '/') => ({ headers, url }) as unknown as IncomingMessage;

describe('checkAccess', () => {
  const policy: AccessPolicy = { hosts: ['127.0.0.1:8080'], origins: ['http://127.0.0.1:8080'], token: 'secret' };
  const cases: [string, Record<string, string>, AccessPolicy, ReturnType<typeof checkAccess>][] = [
    ['no Host at all', { authorization: 'Bearer secret' }, policy, { status: 403, reason: 'Host "" is not one of this server\'s names' }],
    ['a foreign Host', { host: 'evil.example:8080' }, policy, { status: 403, reason: 'Host "evil.example:8080" is not one of this server\'s names' }],
    ['a Host in upper case', { host: '127.0.0.1:8080', authorization: 'Bearer secret' }, policy, undefined],
    ['any Host, and none', { authorization: 'Bearer secret' }, { ...policy, hosts: 'any' }, undefined],
    ['a foreign Origin, named as sent', { host: '127.0.0.1:8080', origin: 'http://Evil.example' }, policy, { status: 403, reason: 'Origin "http://Evil.example" is not allowed' }],
    ['an allowed Origin in another case', { host: '127.0.0.1:8080', origin: 'HTTP://127.0.0.1:8080', authorization: 'Bearer secret' }, policy, undefined],
    ['no token where one is needed', { host: '127.0.0.1:8080' }, policy, { status: 401, reason: 'a valid token is required' }],
    ['no token where none is needed', { host: '127.0.0.1:8080' }, { ...policy, token: undefined }, undefined],
  ];
  for (const [what, headers, given, expected] of cases) {
    it(what, () => expect(checkAccess(request(headers), given)).toEqual(expected));
  }
});

describe('tokenOf', () => {
  const both = { tokenCookie: 'twylt_token', tokenQuery: 'token' };
  const cases: [string, Record<string, string>, string, Partial<typeof both>, string | undefined][] = [
    ['Bearer, spaces around', { authorization: 'bearer   abc  ' }, '/', {}, 'abc'],
    ['Bearer with two words', { authorization: 'Bearer abc def' }, '/', {}, undefined],
    ['another scheme ending in Bearer', { authorization: 'NotBearer abc' }, '/', {}, undefined],
    ['Bearer without a space', { authorization: 'Bearerabc' }, '/', {}, undefined],
    ['Bearer first, then the cookie', { authorization: 'Bearer abc', cookie: 'twylt_token=def' }, '/?token=ghi', both, 'abc'],
    ['the cookie, decoded, among others', { cookie: 'other=1; twylt_token = a%20b ;x=y' }, '/', both, 'a b'],
    ['a cookie the policy does not name', { cookie: 'twylt_token=def' }, '/', {}, undefined],
    ['a cookie with no name', { cookie: '=def' }, '/', { tokenCookie: '' }, undefined],
    ['a cookie whose name only starts like ours', { cookie: 'twylt_token_x=def' }, '/', both, undefined],
    ['a malformed cookie of ours counts as none (then the query)', { cookie: 'twylt_token=%E0%A4%A' }, '/?token=q', both, 'q'],
    ['the query, where the policy names it', {}, '/page?token=ghi', both, 'ghi'],
    ['a query the policy does not name', {}, '/page?token=ghi', {}, undefined],
    ['a query named "undefined" the policy does not name', {}, '/page?undefined=ghi', {}, undefined],
    ['a malformed cookie of ours, then a good one: still none', { cookie: 'twylt_token=%E0%A4%A; twylt_token=good' }, '/', { tokenCookie: 'twylt_token' }, undefined],
  ];
  for (const [what, headers, url, policy, expected] of cases) {
    it(what, () => expect(tokenOf(request(headers, url), policy)).toBe(expected));
  }
});

describe('loopback names and Host values', () => {
  const loopback: [string, boolean][] = [
    ['localhost', true],
    ['LOCALHOST', true],
    ['app.localhost', true],
    ['127.9.9.9', true],
    ['128.0.0.1', false],
    ['[::1]', true],
    ['::1', true],
    ['0:0:0:0:0:0:0:1', true],
    ['[0:0:0:0:0:0:0:1]', true],
    ['::2', false],
    ['x[::1]', false],
    ['[::1]x', false],
    ['example.com', false],
  ];
  for (const [host, expected] of loopback) it(`${host}: ${expected ? 'loopback' : 'not loopback'}`, () => expect(isLoopback(host)).toBe(expected));

  it('a name with something after its port is no port', () => {
    expect(hostsFor('127.0.0.1', 9, ['x:1y'])).toContain('x:1y:9');
  });

  it('extra names keep their port, or get the server\'s; IPv6 in brackets', () => {
    expect(hostsFor('0.0.0.0', 9, ['Name.example:8080', 'name.example', '::1', '[::1]:7', '2001:db8::1'])).toEqual([
      '0.0.0.0:9',
      'name.example:8080',
      'name.example:9',
      '[::1]:9',
      '[::1]:7',
      '[2001:db8::1]:9',
    ]);
  });
});
