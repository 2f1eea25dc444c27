import type { ReactNode } from "react";
import { ServiceAuthProvider } from "service-auth/nextjs/client";
import "./globals.css";

// Rendered per request: the backend URL is read at run time, not baked in by `next build`.
export const dynamic = "force-dynamic";

export const metadata = { title: "Service Auth · Next.js" };

/** The backend's address as the browser reaches it (its WebSocket); the server's by default. */
function publicBackendUrl(): string {
  const url = process.env.SERVICE_AUTH_PUBLIC_URL ?? process.env.SERVICE_AUTH_URL;
  if (!url)
    throw new Error("Set SERVICE_AUTH_URL (and SERVICE_AUTH_PUBLIC_URL if browsers reach it elsewhere)");
  return url;
}

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body>
        <ServiceAuthProvider url={publicBackendUrl()}>{children}</ServiceAuthProvider>
      </body>
    </html>
  );
}
