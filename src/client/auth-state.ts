/**
 * The client's authentication: the token setting (`setAuth` / `clearAuth`), the token sent in
 * `connect` and `authenticate`, the answer to an `auth_error` (one forced refresh, then signed
 * out) and the `isAuthenticated` the app sees.
 */
import { type ClientMessage, PROTOCOL_VERSION } from "../protocol/messages.ts";
import { BackendError } from "./backend-error.ts";
import type { Outbox } from "./outbox.ts";
import { type FetchToken, TokenManager, type TokenManagerOptions } from "./token-manager.ts";
import type { Link } from "./transport.ts";

/** What the auth state needs from the client it belongs to. */
export interface AuthClient {
  readonly outbox: Outbox;
  readonly isClosed: boolean;
  /** Stops every live query with `error` (signed out: the client cannot tell which need auth). */
  stopLiveQueries(error: BackendError): void;
}

interface Setting {
  manager: TokenManager;
  onChange?: (isAuthenticated: boolean) => void;
}

/** The token fetch started when a socket was created, for its handshake. */
export interface Prefetched {
  setting: Setting | null;
  token: Promise<string | null> | null;
}

export class AuthState {
  private setting: Setting | null = null;
  /** Bumped whenever auth is set or cleared, so late token fetches of an old setting are dropped. */
  private generation = 0;
  private authenticated = false;
  /** One forced refresh per auth error; a second refusal in a row is a sign-out. */
  private refreshedForAuthError = false;
  /** The token sent in the last `connect` message. */
  private connectToken: string | null = null;

  constructor(
    private readonly tokenOptions: Omit<TokenManagerOptions, "onRefresh"> | undefined,
    private readonly client: AuthClient,
  ) {}

  /** Whether the server accepted the current token. */
  get isAuthenticated(): boolean {
    return this.authenticated;
  }

  /** Whether a token setting is in force (`setAuth` without a later sign-out or `clearAuth`). */
  get active(): boolean {
    return this.setting !== null;
  }

  set(fetchToken: FetchToken, onChange?: (isAuthenticated: boolean) => void): void {
    this.setting?.manager.stop();
    const generation = ++this.generation;
    const manager = new TokenManager(fetchToken, {
      ...this.tokenOptions,
      onRefresh: (token) => {
        if (generation !== this.generation) return;
        if (token === null) this.signedOut(new BackendError("UNAUTHORIZED", "Session ended"));
        else if (this.client.outbox.ready) this.send({ type: "authenticate", token });
      },
    });
    this.setting = { manager, onChange };
    this.refreshedForAuthError = false;
  }

  clear(): void {
    this.setting?.manager.stop();
    this.setAuthenticated(false);
    this.setting = null;
    this.generation++;
  }

  /** The client closed: no more refreshes. */
  stop(): void {
    this.setting?.manager.stop();
  }

  /** A socket is being created: its token is fetched while it opens, not after. */
  prefetch(): Prefetched {
    const setting = this.setting;
    return { setting, token: setting ? setting.manager.getToken() : null };
  }

  /** The socket opened: sends `connect` with the current setting's token. */
  async sendConnect(link: Link, prefetched: Prefetched): Promise<void> {
    let setting = this.setting;
    let token: string | null = null;
    while (setting) {
      token = await (setting === prefetched.setting && prefetched.token
        ? prefetched.token
        : setting.manager.getToken());
      if (this.setting === setting) break;
      setting = this.setting; // auth changed while the token was fetched: use the new setting
    }
    if (!link.isCurrent()) return;
    if (setting && token === null) this.signedOut(new BackendError("UNAUTHORIZED", "Not signed in"), false);
    this.connectToken = token;
    link.send({ type: "connect", v: PROTOCOL_VERSION, token });
  }

  /**
   * `connected` arrived. Returns whether requests can go now; otherwise an `auth_error` follows,
   * or our `authenticate` does (auth was set after the `connect` message went out).
   */
  connected(authenticated: boolean): boolean {
    if (authenticated) {
      this.accepted();
      return true;
    }
    if (!this.setting) return true;
    if (this.connectToken === null) void this.renew(false);
    return false;
  }

  /** `authenticated` arrived (requests can go either way). */
  authenticatedReply(authenticated: boolean): void {
    if (authenticated) this.accepted();
  }

  /** The server refused our credentials (`auth_error`): force one refresh, else we are signed out. */
  async refused(error: BackendError): Promise<void> {
    if (!this.setting) {
      // Not using auth: continue anonymously.
      this.send({ type: "authenticate", token: null });
      return;
    }
    if (this.refreshedForAuthError) {
      this.signedOut(error);
      return;
    }
    this.refreshedForAuthError = true;
    await this.renew(true, error);
  }

  /** Sends `authenticate` with the current (or, forced, a freshly fetched) token. */
  async renew(force: boolean, cause?: BackendError): Promise<void> {
    const setting = this.setting;
    if (!setting) return;
    const generation = this.generation;
    const token = await (force ? setting.manager.refresh() : setting.manager.getToken());
    if (generation !== this.generation || this.client.isClosed) return;
    if (token === null) {
      this.signedOut(cause ?? new BackendError("UNAUTHORIZED", "Not signed in"));
      return;
    }
    this.send({ type: "authenticate", token });
  }

  private accepted(): void {
    this.refreshedForAuthError = false;
    this.setAuthenticated(true);
  }

  /**
   * Signed out (the token endpoint said 401, or a fresh token was refused too): report
   * isAuthenticated false and stop every live query — the client cannot tell which ones need
   * auth — with `error`; the connection continues anonymously.
   */
  private signedOut(error: BackendError, tellServer = true): void {
    this.setting?.manager.stop();
    this.generation++;
    const onChange = this.setting?.onChange;
    this.setting = null;
    this.refreshedForAuthError = false;
    this.client.stopLiveQueries(error);
    // Reported even when never authenticated: the app learns "signed out" either way.
    this.authenticated = false;
    onChange?.(false);
    if (tellServer) this.send({ type: "authenticate", token: null });
  }

  private setAuthenticated(value: boolean): void {
    if (this.authenticated === value) return;
    this.authenticated = value;
    this.setting?.onChange?.(value);
  }

  private send(message: ClientMessage): void {
    this.client.outbox.send(message);
  }
}
