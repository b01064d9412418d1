// The cluster bus on LMDB: one process holds the store, so every message goes to this process's own listeners (on a
// later microtask, as a notice would). It is always listening and never needs a resync.
import type { ClusterBus } from '../repos.ts';

export function createProcessBus(): ClusterBus {
  const topics = new Map<string, Set<(payload: string) => void>>();
  let closed = false;
  return {
    publish: async (topic, payload) => {
      if (closed) return;
      await Promise.resolve();
      for (const l of [...(topics.get(topic) ?? [])]) l(payload);
    },
    subscribe(topic, listener) {
      let set = topics.get(topic);
      if (!set) topics.set(topic, (set = new Set()));
      set.add(listener);
      return () => void set.delete(listener);
    },
    onResync: () => () => undefined,
    listening: () => !closed,
    close: async () => {
      closed = true;
      topics.clear();
    },
  };
}
