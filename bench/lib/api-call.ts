/**
 * The benchmark side of the function API: one `POST /api/{kind}` with `{path, args}` and an
 * optional bearer token, as the groups use it to set up data and check answers.
 */

export type FunctionKind = "query" | "mutation" | "action";

/** An answer as it came: the HTTP status and the parsed JSON body. */
export interface ApiAnswer {
  status: number;
  body: { status?: string; value?: any; code?: string; message?: string };
}

/** Posts one function call to `baseUrl` and returns the answer, whatever its status. */
export async function postFunction(
  baseUrl: string,
  kind: FunctionKind,
  path: string,
  args: unknown,
  token?: string,
): Promise<ApiAnswer> {
  const response = await fetch(`${baseUrl}/api/${kind}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ path, args }),
  });
  return { status: response.status, body: (await response.json()) as ApiAnswer["body"] };
}

/** Posts one function call and returns its value; throws unless it succeeded. */
export async function callFunction(
  baseUrl: string,
  kind: FunctionKind,
  path: string,
  args: unknown,
  token?: string,
): Promise<any> {
  const { status, body } = await postFunction(baseUrl, kind, path, args, token);
  if (status !== 200 || body.status !== "success")
    throw new Error(`${path} on ${baseUrl} answered ${status}: ${body.message ?? body.code}`);
  return body.value;
}
