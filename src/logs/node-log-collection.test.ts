import { describe, expect, it } from 'vitest';
import { claimsToHandBack, claimsToTake, segmentKey } from './node-log-collection.ts';
import { isValidBlobKey } from '../blobs/blob-store.ts';

describe('sharing node log claims out', () => {
  it('takes up to the fair share first, then up to the bound after a grace', () => {
    expect(claimsToTake({ held: 0, nodes: 10, collectors: 3, max: undefined })).toMatchObject({ fair: 4, share: 4 });
    expect(claimsToTake({ held: 4, nodes: 10, collectors: 3, max: undefined }).share).toBe(0);
    // A bound below the share caps both; nodes the bounded replica cannot take go to the others after the grace.
    expect(claimsToTake({ held: 0, nodes: 10, collectors: 3, max: 2 })).toEqual({ fair: 4, share: 2, beyond: 0 });
    expect(claimsToTake({ held: 4, nodes: 10, collectors: 3, max: 6 })).toEqual({ fair: 4, share: 0, beyond: 2 });
    // Alone: every node is its share.
    expect(claimsToTake({ held: 0, nodes: 7, collectors: 1, max: undefined }).share).toBe(7);
    expect(claimsToTake({ held: 0, nodes: 0, collectors: 0, max: undefined }).share).toBe(0);
  });
});

describe('handing node log claims back', () => {
  it('hands back what is over the share, as far as others are under theirs', () => {
    expect(claimsToHandBack(10, 5, [0])).toBe(5); // a replica joined
    expect(claimsToHandBack(4, 4, [4, 2])).toBe(0); // at its share
    expect(claimsToHandBack(6, 4, [4, 3])).toBe(1);
    expect(claimsToHandBack(6, 4, [])).toBe(0); // alone
  });
});

describe('segment keys', () => {
  it('sort by their number as text and are valid blob keys', () => {
    const keys = [10, 2, 1, 100].map((seq) => segmentKey('node1', seq, 'ab12cd34'));
    expect([...keys].sort()).toEqual([1, 2, 10, 100].map((seq) => segmentKey('node1', seq, 'ab12cd34')));
    expect(keys.every(isValidBlobKey)).toBe(true);
  });
});
