// A transaction's repositories, each built on first use. A transaction touches two or three of the nine, and
// building all of them (dozens of closures) for every write was ~6% of a conversation turn's CPU.
import type { StoreRepos } from './repos.ts';

export type RepoFactories<S> = { [K in keyof StoreRepos]: (scope: S) => StoreRepos[K] };

/** `(scope) => repos`: the engine's repositories on `scope`, each made by its factory when first read. */
export function lazyRepos<S>(factories: RepoFactories<S>): (scope: S) => StoreRepos {
  const prototype = {};
  for (const name of Object.keys(factories) as (keyof StoreRepos)[]) {
    Object.defineProperty(prototype, name, {
      enumerable: true,
      get(this: { scope: S }) {
        const repo = factories[name](this.scope);
        Object.defineProperty(this, name, { value: repo, enumerable: true });
        return repo;
      },
    });
  }
  return (scope) => Object.create(prototype, { scope: { value: scope } }) as StoreRepos;
}

/** The repositories on `scope`, every one built now: the store's own, used outside transactions. */
export function allRepos<S>(factories: RepoFactories<S>, scope: S): StoreRepos {
  const repos = {} as Record<keyof StoreRepos, unknown>;
  for (const name of Object.keys(factories) as (keyof StoreRepos)[]) repos[name] = factories[name](scope);
  return repos as StoreRepos;
}
