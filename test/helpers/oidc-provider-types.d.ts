/**
 * The part of `oidc-provider` (9.x, which ships no types) that test/helpers/oidc-provider.ts uses.
 */
declare module "oidc-provider" {
  import type { IncomingMessage, ServerResponse } from "node:http";

  interface Account {
    accountId: string;
    claims(): Promise<Record<string, unknown>>;
  }

  interface Configuration {
    clients?: Record<string, unknown>[];
    claims?: Record<string, string[]>;
    findAccount?(ctx: unknown, sub: string): Promise<Account | undefined>;
    jwks?: { keys: Record<string, unknown>[] };
    cookies?: { keys?: string[] };
    pkce?: { required?(ctx: unknown, client: unknown): boolean };
    ttl?: Record<string, number>;
    features?: Record<string, { enabled: boolean }>;
  }

  export default class Provider {
    constructor(issuer: string, configuration?: Configuration);
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    on(event: "server_error", listener: (ctx: unknown, error: Error) => void): this;
  }
}
