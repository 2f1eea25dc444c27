import type { NextConfig } from "next";

const config: NextConfig = {
  // `npm run typecheck` checks this app with the rest of the repository; the build need not repeat it.
  typescript: { ignoreBuildErrors: true },
  // The helpers and the example import TypeScript sources with their extensions (as NodeNext wants).
  poweredByHeader: false,
};

export default config;
