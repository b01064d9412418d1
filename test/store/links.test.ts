// Contract: MagicLinkStore (src/store/repos.ts), on every engine of engines.ts.
import { describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/repos.ts';
import { concurrently, freshStore, warmUp } from './contract.ts';
import { engines } from './engines.ts';

export function describeLinksContract(engine: string, open: () => Promise<Store>) {
  describe(`${engine}: magic links`, () => {
    const store = freshStore(open);
    const link = { email: 'ada@example.com', externalId: 'ext-ada', expiresAt: 5000 };

    it('a link is stored by its token hash and read back under lock; an unknown hash is undefined', async () => {
      await store().links.insert('hash-1', link);
      expect(await store().transaction((tx) => tx.links.lock('hash-1'))).toEqual(link);
      expect(await store().transaction((tx) => tx.links.lock('hash-2'))).toBeUndefined();
    });

    it('markUsed records when it was used', async () => {
      await store().links.insert('hash-1', link);
      await store().transaction((tx) => tx.links.markUsed('hash-1', 1234));
      expect(await store().transaction((tx) => tx.links.lock('hash-1'))).toEqual(Object.assign({ usedAt: 1234 }, link));
    });

    it('pruneExpired deletes links expired at or before now, used or not, and counts them', async () => {
      await store().links.insert('old', Object.assign({}, link, { expiresAt: 100 }));
      await store().links.insert('used', Object.assign({}, link, { expiresAt: 200, usedAt: 50 }));
      await store().links.insert('edge', Object.assign({}, link, { expiresAt: 300 }));
      await store().links.insert('live', Object.assign({}, link, { expiresAt: 301 }));
      expect(await store().links.pruneExpired(300)).toBe(3);
      expect(await store().links.pruneExpired(300)).toBe(0);
      const left = await store().transaction(async (tx) => [await tx.links.lock('old'), await tx.links.lock('edge'), await tx.links.lock('live')]);
      expect(left).toEqual([undefined, undefined, Object.assign({}, link, { expiresAt: 301 })]);
    });

    it('single use under concurrency: of 20 callers that lock, check and mark, exactly one succeeds', async () => {
      await store().links.insert('hash-1', link);
      await warmUp(store());
      const results = await concurrently(20, (i) =>
        store().transaction(async (tx) => {
          const l = await tx.links.lock('hash-1');
          if (!l || l.usedAt !== undefined) return false;
          await tx.links.markUsed('hash-1', 2000 + i);
          return true;
        }),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
    });
  });
}

for (const e of engines) describeLinksContract(e.name, e.open);
