/// <reference types="vite/client" />
import { createRootRoute, HeadContent, Outlet, Scripts } from "@tanstack/react-router";
import type { ReactNode } from "react";
import { ServiceAuthProvider } from "service-auth/tanstack-start";
import css from "../lib/app.css?url";
import { getBackendUrl } from "../lib/page-data.ts";

export const Route = createRootRoute({
  head: () => ({
    meta: [
      { charSet: "utf-8" },
      { name: "viewport", content: "width=device-width, initial-scale=1" },
      { title: "Service Auth · TanStack Start" },
    ],
    links: [{ rel: "stylesheet", href: css }],
  }),
  loader: async () => ({ backendUrl: await getBackendUrl() }),
  // The backend URL never changes within a page load.
  staleTime: Number.POSITIVE_INFINITY,
  shellComponent: Shell,
  component: Root,
});

function Shell({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <head>
        <HeadContent />
      </head>
      <body>
        {children}
        <Scripts />
      </body>
    </html>
  );
}

function Root() {
  const { backendUrl } = Route.useLoaderData();
  return (
    <ServiceAuthProvider url={backendUrl}>
      <Outlet />
    </ServiceAuthProvider>
  );
}
