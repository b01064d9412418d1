// An in-memory inverted index with exact top-k BM25 search, for the LMDB engine's knowledge chunks. Each document has
// a few fields (each with a boost); each term keeps one posting list per field in typed arrays (document slot, term
// frequency). A search walks the posting lists of the query's terms once, adding each posting's BM25 share into a
// typed-array accumulator, then keeps the best `limit` documents in a bounded heap: no object per matching document,
// no sort of every match. The score is MiniSearch's (which this index replaced, so rankings did not change):
//   score(d) = m(d) × Σ over query terms t (repeats counted), fields f:
//              boost_f × idf_f(t) × (δ + tf × (k1 + 1) / (tf + k1 × (1 − b + b × len_f(d) / avglen_f)))
//   idf_f(t) = ln(1 + (N − df_f(t) + 0.5) / (df_f(t) + 0.5))
// where m(d) is how many distinct query terms d contains (more matching words rank higher), N the number of
// documents, df_f(t) the documents whose field f holds t, len_f(d) the field's length in distinct words.

export interface Bm25Params {
  /** Field boosts, in field order. */
  boosts: number[];
  k1: number;
  b: number;
  delta: number;
}

/** A document to index: its field lengths and, per field, term → frequency. */
export interface Bm25Doc {
  lengths: number[];
  terms: Map<string, number>[];
}

interface Postings {
  slots: Int32Array;
  tfs: Int32Array;
  n: number;
}

export interface Bm25Hit {
  slot: number;
  score: number;
}

export interface Bm25Index {
  /** Indexes a document in a free slot and returns that slot. */
  add(doc: Bm25Doc): number;
  remove(slot: number): void;
  /**
   * The `limit` best documents for these (already processed) query terms, best first; `accept` filters slots and
   * `before` breaks exact ties (true when slot a ranks before slot b).
   */
  search(terms: string[], limit: number, accept: (slot: number) => boolean, before: (a: number, b: number) => boolean): Bm25Hit[];
  /** The document in a slot as it was indexed (for saving the index). */
  doc(slot: number): Bm25Doc | undefined;
  size(): number;
}

const grow = (a: Int32Array, min: number) => {
  const next = new Int32Array(Math.max(min, a.length * 2, 4));
  next.set(a);
  return next;
};

export function createBm25Index(params: Bm25Params): Bm25Index {
  const fields = params.boosts.length;
  const postings = new Map<string, (Postings | undefined)[]>();
  const docs: (Bm25Doc | undefined)[] = [];
  const free: number[] = [];
  const totalLength = new Float64Array(fields);
  let count = 0;
  // each field's length by slot, for the length normalisation without a lookup per posting
  let lengths = Array.from({ length: fields }, () => new Float64Array(0));
  // per-search scratch, indexed by slot; zero (or -1) between searches
  let score = new Float64Array(0);
  let matched = new Int32Array(0);
  let lastTerm = new Int32Array(0);
  let touched = new Int32Array(0);

  const ensureCapacity = (slots: number) => {
    if (score.length >= slots) return;
    const size = Math.max(slots, score.length * 2, 64);
    lengths = lengths.map((old) => {
      const next = new Float64Array(size);
      next.set(old);
      return next;
    });
    score = new Float64Array(size);
    matched = new Int32Array(size);
    lastTerm = new Int32Array(size).fill(-1);
    touched = new Int32Array(size);
  };

  function add(doc: Bm25Doc): number {
    const slot = free.pop() ?? docs.length;
    docs[slot] = doc;
    count++;
    ensureCapacity(slot + 1);
    for (let f = 0; f < fields; f++) {
      totalLength[f] += doc.lengths[f];
      lengths[f][slot] = doc.lengths[f];
      for (const [term, tf] of doc.terms[f]) {
        let lists = postings.get(term);
        if (!lists) postings.set(term, (lists = new Array<Postings | undefined>(fields).fill(undefined)));
        const p = (lists[f] ??= { slots: new Int32Array(4), tfs: new Int32Array(4), n: 0 });
        if (p.n === p.slots.length) {
          p.slots = grow(p.slots, p.n + 1);
          p.tfs = grow(p.tfs, p.n + 1);
        }
        p.slots[p.n] = slot;
        p.tfs[p.n++] = tf;
      }
    }
    return slot;
  }

  function remove(slot: number) {
    const doc = docs[slot];
    if (!doc) return;
    for (let f = 0; f < fields; f++) {
      totalLength[f] -= doc.lengths[f];
      for (const term of doc.terms[f].keys()) {
        const lists = postings.get(term);
        const p = lists?.[f];
        if (!lists || !p) continue;
        const at = p.slots.subarray(0, p.n).indexOf(slot);
        if (at < 0) continue;
        p.n--;
        p.slots[at] = p.slots[p.n];
        p.tfs[at] = p.tfs[p.n];
        if (p.n === 0) lists[f] = undefined;
        if (lists.every((l) => l === undefined)) postings.delete(term);
      }
    }
    docs[slot] = undefined;
    free.push(slot);
    count--;
  }

  /**
   * Adds the query term's BM25 shares into the accumulator and, on its first occurrence in the query (`termIndex`
   * ≥ 0), counts it once in each document that holds it; returns how many slots are touched so far.
   */
  function accumulate(term: string, termIndex: number, touchedSoFar: number): number {
    const lists = postings.get(term);
    if (!lists) return touchedSoFar;
    let t = touchedSoFar;
    const { k1, b, delta } = params;
    for (let f = 0; f < fields; f++) {
      const p = lists[f];
      if (!p) continue;
      const idf = Math.log(1 + (count - p.n + 0.5) / (p.n + 0.5));
      const avg = totalLength[f] / count;
      const boost = params.boosts[f];
      const length = lengths[f];
      for (let i = 0; i < p.n; i++) {
        const slot = p.slots[i];
        const tf = p.tfs[i];
        const share = boost * (idf * (delta + (tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * length[slot]) / avg))));
        if (matched[slot] === 0) touched[t++] = slot;
        if (termIndex >= 0 && lastTerm[slot] !== termIndex) {
          lastTerm[slot] = termIndex;
          matched[slot]++;
        }
        score[slot] += share;
      }
    }
    return t;
  }

  function search(terms: string[], limit: number, accept: (slot: number) => boolean, before: (a: number, b: number) => boolean): Bm25Hit[] {
    if (count === 0 || limit <= 0) return [];
    const distinct = new Map<string, number>();
    let n = 0;
    for (const term of terms) {
      const repeat = distinct.has(term);
      if (!repeat) distinct.set(term, distinct.size);
      n = accumulate(term, repeat ? -1 : (distinct.get(term) as number), n);
    }
    const heap = createTopK(limit, before);
    for (let i = 0; i < n; i++) {
      const slot = touched[i];
      if (accept(slot)) heap.offer(slot, score[slot] * matched[slot]);
      score[slot] = 0;
      matched[slot] = 0;
      lastTerm[slot] = -1;
    }
    return heap.sorted();
  }

  return { add, remove, search, doc: (slot) => docs[slot], size: () => count };
}

/** The `limit` best (score, slot) pairs offered, in a min-heap whose root is the worst kept. */
export function createTopK(limit: number, before: (a: number, b: number) => boolean) {
  const scores = new Float64Array(limit);
  const slots = new Int32Array(limit);
  let size = 0;
  // true when entry i ranks below entry j (the heap keeps the lowest at its root)
  const worse = (si: number, ai: number, sj: number, aj: number) => si < sj || (si === sj && before(aj, ai));
  const swap = (i: number, j: number) => {
    const s = scores[i];
    scores[i] = scores[j];
    scores[j] = s;
    const a = slots[i];
    slots[i] = slots[j];
    slots[j] = a;
  };
  const up = (i: number) => {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!worse(scores[i], slots[i], scores[parent], slots[parent])) return;
      swap(i, parent);
      i = parent;
    }
  };
  const down = (i: number) => {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let low = i;
      if (l < size && worse(scores[l], slots[l], scores[low], slots[low])) low = l;
      if (r < size && worse(scores[r], slots[r], scores[low], slots[low])) low = r;
      if (low === i) return;
      swap(i, low);
      i = low;
    }
  };
  return {
    offer(slot: number, score: number) {
      if (size < limit) {
        scores[size] = score;
        slots[size] = slot;
        up(size++);
      } else if (worse(scores[0], slots[0], score, slot)) {
        scores[0] = score;
        slots[0] = slot;
        down(0);
      }
    },
    sorted(): Bm25Hit[] {
      const out: Bm25Hit[] = [];
      for (let i = 0; i < size; i++) out.push({ slot: slots[i], score: scores[i] });
      return out.sort((x, y) => y.score - x.score || (before(x.slot, y.slot) ? -1 : before(y.slot, x.slot) ? 1 : 0));
    },
  };
}
