/** `useMutation` and `useAction`: stable callbacks that call the backend over the live connection. */
import { useCallback } from "react";
import type { FunctionReference } from "../backend/functions/references.ts";
import { functionPath } from "../client/function-path.ts";
import { useBackendClient } from "./context.ts";

type CallRef = FunctionReference<"mutation" | "action", "public">;

/**
 * The call's argument list: optional when the function takes no arguments.
 * @example
 * ```ts
 * // api.messages.send takes { body }: its argument list is [args: { body: string }].
 * const args: CallArgs<typeof api.messages.send> = [{ body: "hello" }];
 * await send(...args);
 * ```
 */
export type CallArgs<F extends CallRef> = {} extends F["_args"] ? [args?: F["_args"]] : [args: F["_args"]];

/**
 * A function that runs `F` and resolves with its return value (rejects with a `BackendError`).
 * @example
 * ```ts
 * const send: ReactCall<typeof api.messages.send> = useMutation(api.messages.send);
 * await send({ body: "hello" });
 * ```
 */
export type ReactCall<F extends CallRef> = (...args: CallArgs<F>) => Promise<F["_returns"]>;

/**
 * A callback running the mutation. It resolves after this client's live queries show the
 * mutation's writes. The callback is stable: it changes only with the client or the path.
 * @example
 * ```tsx
 * function Composer() {
 *   const send = useMutation(api.messages.send);
 *   const [body, setBody] = useState("");
 *   return (
 *     <form onSubmit={(e) => { e.preventDefault(); void send({ body }).then(() => setBody("")); }}>
 *       <input value={body} onChange={(e) => setBody(e.target.value)} />
 *     </form>
 *   );
 * }
 * ```
 */
export function useMutation<M extends FunctionReference<"mutation", "public">>(ref: M): ReactCall<M> {
  const client = useBackendClient();
  const path = functionPath(ref); // references are fresh proxies per access: depend on the path
  return useCallback((...args: CallArgs<M>) => client.mutation<M>(path, args[0] ?? {}), [client, path]);
}

/**
 * A callback running the action; stable like {@link useMutation}'s.
 * @example
 * ```tsx
 * function SessionButton() {
 *   const readSession = useAction(api.users.sessionFromAction);
 *   return <button onClick={() => void readSession().then(console.log)}>Session</button>;
 * }
 * ```
 */
export function useAction<A extends FunctionReference<"action", "public">>(ref: A): ReactCall<A> {
  const client = useBackendClient();
  const path = functionPath(ref);
  return useCallback((...args: CallArgs<A>) => client.action<A>(path, args[0] ?? {}), [client, path]);
}
