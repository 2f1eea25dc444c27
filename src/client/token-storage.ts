/**
 * Where a client without cookies keeps its credentials. The default keeps them in memory (gone
 * with the process); an app passes secure storage (e.g. Expo SecureStore, the OS keychain) to keep
 * users signed in across restarts. DOM-free: no `localStorage`, no `document.cookie`.
 */

/**
 * Key-value storage; sync or async (Expo SecureStore's `getItemAsync` / `setItemAsync` fit).
 * @example
 * ```ts
 * import * as SecureStore from "expo-secure-store";
 *
 * const storage: TokenStorage = {
 *   getItem: (key) => SecureStore.getItemAsync(key),
 *   setItem: (key, value) => SecureStore.setItemAsync(key, value),
 *   removeItem: (key) => SecureStore.deleteItemAsync(key),
 * };
 * const auth = new NativeAuth("https://api.example.com", { storage });
 * ```
 */
export interface TokenStorage {
  getItem(key: string): string | null | undefined | Promise<string | null | undefined>;
  setItem(key: string, value: string): void | Promise<void>;
  removeItem(key: string): void | Promise<void>;
}

/**
 * Storage in a `Map`: the default, lost when the process ends.
 * @example
 * ```ts
 * // A CLI that signs in anew every run: the session lives only as long as the process.
 * const auth = new NativeAuth("https://api.example.com", { storage: memoryStorage() });
 * ```
 */
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
