//! nvlink's list merge sort, whose treatment of equal keys decides the order
//! of texture slots (`texslots.rs`) and of shared-memory variables
//! (`shared.rs`).
//!
//! The model (reproduces every measured order): the list is dealt
//! alternately onto two lists by prepending, so each half comes out
//! reversed; each half is sorted the same way; the two sorted halves are
//! merged, taking the first half's head while `first(a, b)` holds for the two
//! heads and the second half's head otherwise. Equal keys therefore come out
//! in a fixed permutation that depends only on the list length and on whether
//! a tie takes the first half (`first` non-strict) or the second (strict).

/// Sorts `list` as nvlink's list merge sort does (see the module
/// documentation): `first(a, b)` says whether head `a` of the first sorted
/// half goes before head `b` of the second.
pub(crate) fn merge_sort<T>(list: Vec<T>, first: &impl Fn(&T, &T) -> bool) -> Vec<T> {
    if list.len() <= 1 {
        return list;
    }
    let mut a = Vec::with_capacity(list.len().div_ceil(2));
    let mut b = Vec::with_capacity(list.len() / 2);
    for (i, x) in list.into_iter().enumerate() {
        if i % 2 == 0 {
            a.push(x);
        } else {
            b.push(x);
        }
    }
    // Dealt by prepending: each half comes out reversed.
    a.reverse();
    b.reverse();
    let a = merge_sort(a, first);
    let b = merge_sort(b, first);
    let mut out = Vec::with_capacity(a.len() + b.len());
    let mut a = a.into_iter().peekable();
    let mut b = b.into_iter().peekable();
    loop {
        let take_a = match (a.peek(), b.peek()) {
            (Some(x), Some(y)) => first(x, y),
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => break,
        };
        let next = if take_a { a.next() } else { b.next() };
        out.extend(next);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::merge_sort;

    /// Equal keys, a tie taking the second half: the order of nvlink's
    /// link-wide list of module-scope `.shared` variables of equal size
    /// (measured with 2..6 variables).
    #[test]
    fn ties_to_the_second_half() {
        let measured: &[&[u32]] = &[&[1], &[2, 1], &[2, 1, 3], &[2, 4, 1, 3], &[2, 4, 3, 5, 1]];
        for want in measured {
            let n = want.len() as u32;
            assert_eq!(merge_sort((1..=n).collect(), &|_, _| false), *want);
        }
    }

    /// Equal keys, a tie taking the first half: the order of a kernel's own
    /// `.shared` variables of equal alignment and size (measured with 2..6).
    #[test]
    fn ties_to_the_first_half() {
        let measured: &[&[u32]] = &[
            &[1],
            &[1, 2],
            &[3, 1, 2],
            &[3, 1, 4, 2],
            &[1, 5, 3, 4, 2],
            &[1, 5, 3, 2, 6, 4],
        ];
        for want in measured {
            let n = want.len() as u32;
            assert_eq!(merge_sort((1..=n).collect(), &|_, _| true), *want);
        }
    }

    #[test]
    fn sorts_by_the_key() {
        let v = merge_sort(vec![3, 1, 4, 1, 5, 9, 2, 6], &|a, b| a <= b);
        assert_eq!(v, [1, 1, 2, 3, 4, 5, 6, 9]);
        assert!(merge_sort(Vec::<u8>::new(), &|a, b| a <= b).is_empty());
    }
}
