"use client";
/** What the page shows when rendering it failed (e.g. the backend cannot be reached). */
export default function PageError({ error, reset }: { error: Error; reset: () => void }) {
  return (
    <div role="alert">
      <p>Something went wrong: {error.message}</p>
      <button type="button" onClick={reset}>
        Try again
      </button>
    </div>
  );
}
