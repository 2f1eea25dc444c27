// SvelteKit's configuration: a Node server (`node build`) from `vite build`.
import { fileURLToPath } from "node:url";
import nodeAdapter from "@sveltejs/adapter-node";

const root = fileURLToPath(new URL("../..", import.meta.url));
const node = nodeAdapter({ out: fileURLToPath(new URL("./build", import.meta.url)) });

/**
 * adapter-node reads the dependencies to leave out of the server bundle from `./package.json`.
 * This example has none of its own: it is part of the repository's package (so `service-auth/*`
 * resolves to it), whose package.json is two folders up. An app of its own uses `node` as is.
 */
const adapter = {
  ...node,
  async adapt(builder) {
    const cwd = process.cwd();
    process.chdir(root);
    try {
      await node.adapt(builder);
    } finally {
      process.chdir(cwd);
    }
  },
};

/** @type {import('@sveltejs/kit').Config} */
export default { kit: { adapter } };
