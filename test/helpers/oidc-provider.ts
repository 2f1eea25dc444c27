/**
 * A real OpenID Connect provider for the OAuth tests: `oidc-provider` on 127.0.0.1 (a free port)
 * with one confidential client (secret sent in the token request body, PKCE required), its
 * development login and consent pages (any password; the login names one of `users`), and signing
 * keys made per run.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { exportJWK, generateKeyPair } from "jose";
import Provider from "oidc-provider";

/** What the provider says about a user (the login is the `sub`). */
export interface OidcUser {
  email: string;
  name: string;
  email_verified: boolean;
}

export interface TestOidcProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  close(): Promise<void>;
}

export async function startOidcProvider(options: {
  /** The client's one allowed redirect URI. */
  redirectUri: string;
  users: Record<string, OidcUser>;
}): Promise<TestOidcProvider> {
  let handle: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.writeHead(503).end();
  const server = createServer((req, res) => handle(req, res));
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const issuer = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const clientId = "service-auth-example";
  const clientSecret = `secret-${crypto.randomUUID()}`;
  const { privateKey } = await generateKeyPair("RS256", { extractable: true });
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: [options.redirectUri],
        response_types: ["code"],
        grant_types: ["authorization_code"],
        token_endpoint_auth_method: "client_secret_post",
      },
    ],
    claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name"] },
    async findAccount(_ctx, sub) {
      const user = options.users[sub];
      if (!user) return undefined;
      return { accountId: sub, claims: async () => ({ sub, ...user }) };
    },
    jwks: { keys: [{ ...(await exportJWK(privateKey)), alg: "RS256", use: "sig", kid: "test" }] },
    cookies: { keys: [crypto.randomUUID()] },
    pkce: { required: () => true },
    // Set, so the provider does not print a notice for each default it falls back to.
    ttl: { Interaction: 600, Session: 3600, Grant: 3600, AccessToken: 600, IdToken: 600 },
    features: { devInteractions: { enabled: true } },
  });
  provider.on("server_error", (_ctx, error) => console.error("oidc-provider:", error));
  handle = provider.callback();
  return {
    issuer,
    clientId,
    clientSecret,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
