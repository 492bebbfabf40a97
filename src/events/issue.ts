// Its own module, so that every reader of bodies (parse.ts, canonical.ts, identity.ts) can name a
// problem without importing another reader: canonical.ts and parse.ts used to import each other.

/** A problem found in a body, with a readable path such as `data.interview_score`. */
export interface Issue {
  /** Where, e.g. `data.interview_score`; empty for the whole body. */
  path: string;
  /** What is wrong. */
  message: string;
}
