/** The little of oidc-provider (a devDependency, shipped without types) that the OAuth tests use. */
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  export class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    /** The request handler of its Koa application. */
    callback(): (request: IncomingMessage, response: ServerResponse) => void;
  }
  export default Provider;
}
