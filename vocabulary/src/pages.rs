//! How a listing asks for its next page, and where its page's data says the next one
//! starts.

use crate::form::{Form, Static};

/// How a listing operation asks for its next page, and the keys of its page's data that
/// say where the next one starts (the spec's `service.pagination`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PageStyle<F: Form = Static> {
    /// A cursor in; the next cursor out, in the data's `next` key; ends when no cursor
    /// comes back.
    Cursor {
        /// The key of the next cursor.
        next: F::Text,
    },
    /// A page number in; the next page number out, in `next`; ends when it is absent,
    /// zero or does not move.
    Page {
        /// The key of the next page's number.
        next: F::Text,
        /// The keys of this page's number (the first one present counts).
        current: F::List<F::Text>,
    },
    /// A page number (and a size, where the service takes one) in; whether more follow (or
    /// that this is the last page), this page (`current`) and the number of pages (`total`)
    /// out.
    PageSize {
        /// The key of the flag: that more pages follow, or, where `last`, that this page is
        /// the last.
        more: F::Text,
        /// Whether the flag at `more` says this page is the last (`last: true`), not that
        /// more follow.
        last: bool,
        /// The key of this page's number.
        current: F::Text,
        /// The key of the number of pages.
        total: F::Text,
        /// The number of the first page: 1, or 0 for a service that counts pages from 0.
        first: u32,
    },
    /// The last record's id in (as the cursor: `starting_after`); whether more follow (or
    /// that this page is the last) out; ends when no more follow.
    After {
        /// The key of the flag: that more pages follow, or, where `last`, that this page is
        /// the last.
        more: F::Text,
        /// Whether the flag at `more` says this page is the last.
        last: bool,
        /// The key of the page's records in its data; empty when the data is the list.
        records: F::Text,
        /// The key of each record whose value the next page starts after (`id`).
        id: F::Text,
    },
}

impl Copy for PageStyle<Static> {}

impl<F: Form> PageStyle<F> {
    /// The spec's word for it: `cursor`, `page`, `page_size`, `after`.
    pub fn as_str(&self) -> &'static str {
        match self {
            PageStyle::Cursor { .. } => "cursor",
            PageStyle::Page { .. } => "page",
            PageStyle::PageSize { .. } => "page_size",
            PageStyle::After { .. } => "after",
        }
    }
}
