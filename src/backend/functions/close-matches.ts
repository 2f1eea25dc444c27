/** "Did you mean": the candidates closest to a mistyped name by edit distance. */

/** Levenshtein distance (insertions, deletions, substitutions), case-insensitive. */
export function editDistance(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  let previous = Array.from({ length: y.length + 1 }, (_, j) => j);
  for (let i = 1; i <= x.length; i++) {
    const current = [i];
    for (let j = 1; j <= y.length; j++) {
      current[j] = Math.min(
        previous[j] + 1,
        current[j - 1] + 1,
        previous[j - 1] + (x[i - 1] === y[j - 1] ? 0 : 1),
      );
    }
    previous = current;
  }
  return previous[y.length];
}

/** Up to `max` candidates within a third of `name`'s length (at least 2 edits), closest first. */
export function closeMatches(name: string, candidates: Iterable<string>, max = 3): string[] {
  const limit = Math.max(2, Math.floor(name.length / 3));
  return [...candidates]
    .map((candidate) => ({ candidate, distance: editDistance(name, candidate) }))
    .filter((m) => m.distance <= limit)
    .sort((a, b) => a.distance - b.distance || a.candidate.localeCompare(b.candidate))
    .slice(0, max)
    .map((m) => m.candidate);
}
