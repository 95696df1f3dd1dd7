//! Sorting a drained bucket: a natural merge sort, descending by key.
//!
//! A bucket's entries are gathered newest first, and most of them arrive already in long
//! descending stretches: the entities that push into one picosecond run in key order
//! themselves, so each batch of pushes from one earlier picosecond is sorted. On the scale
//! benchmark's 8,192-host step a sorted bucket averages 490 entries in 19 such runs, and the
//! runs overlap only where two batches land in the same (time, delay class): once the parts
//! of two runs that are already in place are left where they are, a merge moves each entry
//! about twice. A radix sort would read and write every entry once per digit of the entity
//! number, however ordered the entries already are: on those buckets it executes about a
//! quarter more instructions (`docs/performance.md`).
//!
//! Keys are compared whole, so for unique keys the result is the one descending order
//! whatever order the entries came in; equal keys (which the queue allows) keep their
//! gathered order, as the merge is stable.

/// Sorts `v` by key, descending (stable). `runs` and `scratch` are working space kept by the
/// caller for their capacity.
pub(super) fn sort_descending<E: Copy>(
    v: &mut [(u64, E)],
    runs: &mut Vec<u32>,
    scratch: &mut Vec<(u64, E)>,
) {
    // Run starts: a run continues while keys do not increase.
    runs.clear();
    runs.push(0);
    for (i, pair) in v.windows(2).enumerate() {
        if pair[1].0 > pair[0].0 {
            runs.push(i as u32 + 1);
        }
    }
    if runs.len() == 1 {
        return;
    }
    runs.push(v.len() as u32);
    // Merge neighbouring runs pairwise until one is left (`runs` holds their boundaries).
    while runs.len() > 2 {
        let last = runs.len() - 1;
        let mut kept = 1;
        let mut r = 0;
        while r < last {
            if r + 1 == last {
                runs[kept] = runs[last];
                kept += 1;
                break;
            }
            let (start, mid, end) = (runs[r] as usize, runs[r + 1] as usize, runs[r + 2]);
            merge_neighbours(&mut v[start..end as usize], mid - start, scratch);
            runs[kept] = end;
            kept += 1;
            r += 2;
        }
        runs.truncate(kept);
    }
}

/// Merges the descending runs `v[..mid]` and `v[mid..]` in place (stable: on equal keys the
/// first run's entry comes first). Only the overlap moves: the first run's entries that
/// belong before all of the second stay where they are, and so do the second run's entries
/// that belong after all of the first.
#[inline]
fn merge_neighbours<E: Copy>(v: &mut [(u64, E)], mid: usize, scratch: &mut Vec<(u64, E)>) {
    let (a, b) = v.split_at(mid);
    let (a_last, b_first) = (a[a.len() - 1].0, b[0].0);
    if a_last >= b_first {
        return;
    }
    let lead = a.partition_point(|e| e.0 >= b_first);
    let overlap = b.partition_point(|e| e.0 > a_last);
    scratch.clear();
    scratch.extend_from_slice(&a[lead..]);
    let moved = scratch.len();
    debug_assert!(moved > 0 && overlap > 0);
    // SAFETY: every pointer stays inside its slice. `pb` walks `v[mid..mid + overlap]`; the
    // loop ends when it reaches the end. `pa` walks `scratch`: each of those entries has a
    // key above `a_last`, the key of scratch's last entry, so that entry is never taken
    // while the loop runs, and `pa` stays below it. `po` writes `v[lead..]` one entry per
    // step, and behind `pb` (`po` = lead + taken from scratch + taken from b < mid + taken
    // from b = `pb`, as fewer than `moved` = mid - lead entries are taken from scratch), so
    // it never overwrites an entry of `b` not yet read, and after the loop the rest of
    // scratch fits between `po` and `v`'s end (`po` + remaining scratch = mid + overlap).
    unsafe {
        let base = v.as_mut_ptr();
        let mut po = base.add(lead);
        let mut pb = base.add(mid).cast_const();
        let b_end = base.add(mid + overlap).cast_const();
        let mut pa = scratch.as_ptr();
        while pb < b_end {
            let take_b = (*pb).0 > (*pa).0;
            *po = if take_b { *pb } else { *pa };
            pb = pb.add(take_b as usize);
            pa = pa.add(!take_b as usize);
            po = po.add(1);
        }
        let taken = pa.offset_from(scratch.as_ptr()) as usize;
        std::ptr::copy_nonoverlapping(pa, po, moved - taken);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn sorted(mut v: Vec<(u64, u32)>) -> Vec<(u64, u32)> {
        let (mut runs, mut scratch) = (Vec::new(), Vec::new());
        sort_descending(&mut v, &mut runs, &mut scratch);
        v
    }

    #[test]
    fn merges_overlapping_runs_and_leaves_ordered_ones() {
        let v = vec![(9, 0), (5, 1), (1, 2), (8, 3), (4, 4), (7, 5), (0, 6)];
        let keys: Vec<u64> = sorted(v).iter().map(|e| e.0).collect();
        assert_eq!(keys, [9, 8, 7, 5, 4, 1, 0]);
        let ordered = vec![(3, 0), (2, 1), (1, 2)];
        assert_eq!(sorted(ordered.clone()), ordered);
        assert_eq!(sorted(vec![]), vec![]);
        assert_eq!(sorted(vec![(1, 0)]), vec![(1, 0)]);
    }

    #[test]
    fn equal_keys_keep_their_order() {
        let v = vec![(2, 0), (1, 1), (2, 2), (1, 3), (2, 4)];
        assert_eq!(
            sorted(v),
            vec![(2, 0), (2, 2), (2, 4), (1, 1), (1, 3)],
            "stable"
        );
    }

    proptest! {
        /// Any input comes out as the standard library's stable sort (descending) leaves it:
        /// short runs, long runs, many equal keys.
        #[test]
        fn matches_a_stable_sort(keys in prop::collection::vec(0u64..40, 0..300)) {
            let v: Vec<(u64, u32)> = keys.iter().enumerate().map(|(i, &k)| (k, i as u32)).collect();
            let mut want = v.clone();
            want.sort_by_key(|e| std::cmp::Reverse(e.0));
            prop_assert_eq!(sorted(v), want);
        }
    }
}
