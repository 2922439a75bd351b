//! A value with the byte range it was written at, as the frontmatter and the
//! prompt test files both read them.

use std::ops::Range;

/// A value with the byte range (in the whole file text) of the scalar or node that holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spanned<T> {
    /// The value.
    pub value: T,
    /// Byte range in the file text (a quoted scalar's range includes its quotes).
    pub range: Range<usize>,
}

impl<T> Spanned<T> {
    /// Pairs a value with its range.
    pub fn new(value: T, range: Range<usize>) -> Self {
        Spanned { value, range }
    }
}
