/**
 * Where a client without cookies keeps its credentials. The default keeps them in memory (gone
 * with the process); an app passes secure storage (e.g. Expo SecureStore, the OS keychain) to keep
 * users signed in across restarts. DOM-free: no `localStorage`, no `document.cookie`.
 */

/** Key-value storage; sync or async (Expo SecureStore's `getItemAsync` / `setItemAsync` fit). */
export interface TokenStorage {
  getItem(key: string): string | null | undefined | Promise<string | null | undefined>;
  setItem(key: string, value: string): void | Promise<void>;
  removeItem(key: string): void | Promise<void>;
}

/** Storage in a `Map`: the default, lost when the process ends. */
export function memoryStorage(): TokenStorage {
  const items = new Map<string, string>();
  return {
    getItem: (key) => items.get(key) ?? null,
    setItem: (key, value) => {
      items.set(key, value);
    },
    removeItem: (key) => {
      items.delete(key);
    },
  };
}
