import { describe, expect, it } from 'vitest';
import { allRepos, lazyRepos, type RepoFactories } from '../../src/store/lazy-repos.ts';
import type { StoreRepos } from '../../src/store/repos.ts';

const NAMES = ['customers', 'conversations', 'history', 'links', 'proactive', 'jobs', 'whatsapp', 'ownership', 'inbox'] as const;

/** Factories that record what they built, on which scope. */
function counting() {
  const built: string[] = [];
  const factories = Object.fromEntries(
    NAMES.map((name) => [name, (scope: string) => (built.push(`${name}@${scope}`), { name, scope })]),
  ) as unknown as RepoFactories<string>;
  return { built, factories };
}

describe('lazyRepos', () => {
  it('builds a repository on its first use, once per transaction, on that transaction’s scope', () => {
    const { built, factories } = counting();
    const reposOn = lazyRepos(factories);
    const a = reposOn('tx1');
    const b = reposOn('tx2');
    expect(built).toEqual([]);
    const first = a.conversations;
    expect(a.conversations).toBe(first);
    expect(first).toEqual({ name: 'conversations', scope: 'tx1' });
    expect(b.conversations).toEqual({ name: 'conversations', scope: 'tx2' });
    const { history } = a;
    expect(history).toEqual({ name: 'history', scope: 'tx1' });
    expect(built).toEqual(['conversations@tx1', 'conversations@tx2', 'history@tx1']);
  });

  it('allRepos builds every repository at once, as own properties (copies of the store keep them)', () => {
    const { built, factories } = counting();
    const repos: StoreRepos = allRepos(factories, 'root');
    expect(built).toHaveLength(NAMES.length);
    expect(Object.keys(Object.assign({}, repos)).sort()).toEqual([...NAMES].sort());
  });
});
