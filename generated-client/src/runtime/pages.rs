//! Following a listing page by page. The continuation fields are read from the raw
//! answer, so this works whatever type the operation's data is.

use std::collections::HashSet;

use futures::Stream;
use serde::Deserialize;
use serde_json::Value;

use super::client::Session;
use super::error::Error;
use super::retry::CallOptions;
use super::route::{PageStyle, Paginated};
use super::writer::RequestWriter;

/// The continuation fields of a page's `data`, whatever their JSON type.
#[derive(Default, Deserialize)]
struct Continuation {
    #[serde(default)]
    cursor: Option<Value>,
    #[serde(default, rename = "nextPage")]
    next_page: Option<Value>,
    #[serde(default, rename = "hasMore")]
    has_more: Option<Value>,
    #[serde(default)]
    page: Option<Value>,
    #[serde(default, rename = "currentPage")]
    current_page: Option<Value>,
    #[serde(default, rename = "totalPages")]
    total_pages: Option<Value>,
}

fn as_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) if !s.trim().is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn as_page(v: &Value) -> Option<u32> {
    match v {
        Value::Number(n) => n.as_u64().and_then(|n| u32::try_from(n).ok()),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

fn as_flag(v: &Value) -> Option<bool> {
    match v {
        Value::Bool(b) => Some(*b),
        Value::String(s) if s.eq_ignore_ascii_case("true") => Some(true),
        Value::String(s) if s.eq_ignore_ascii_case("false") => Some(false),
        _ => None,
    }
}

/// Where a listing stands between pages.
struct Listing<O> {
    op: O,
    finished: bool,
    /// An error found while reading a page's continuation, returned after that page.
    deferred: Option<Error>,
    seen_cursors: HashSet<String>,
    seen_pages: HashSet<u32>,
    /// The page last asked for, when the client set it.
    requested_page: Option<u32>,
    /// Pages fetched so far.
    fetched: u32,
}

fn looped(what: String) -> Error {
    Error::Pagination { reason: format!("the service sent {what} again, so following it would never end") }
}

impl<O: Paginated> Listing<O> {
    /// Reads the continuation of the page just received and prepares the next request.
    fn advance(&mut self, next: Continuation) {
        match O::STYLE {
            PageStyle::Cursor => match next.cursor.as_ref().and_then(as_text) {
                None => self.finished = true,
                Some(cursor) => {
                    if self.seen_cursors.insert(cursor.clone()) {
                        self.op.set_cursor(Some(cursor));
                    } else {
                        self.deferred = Some(looped("a cursor it had already sent".to_owned()));
                    }
                }
            },
            PageStyle::Page => {
                let current = next
                    .page
                    .as_ref()
                    .or(next.current_page.as_ref())
                    .and_then(as_page)
                    .or(self.requested_page);
                if let Some(c) = current {
                    self.seen_pages.insert(c);
                }
                match next.next_page.as_ref().and_then(as_page) {
                    // The reference: "This value is zero if there are no more pages".
                    None | Some(0) => self.finished = true,
                    Some(n) if Some(n) == current => self.finished = true,
                    Some(n) if self.seen_pages.contains(&n) => {
                        self.deferred = Some(looped(format!("page {n} as the next page")));
                    }
                    Some(n) => self.request_page(n),
                }
            }
            PageStyle::PageSize => {
                let current = next.page.as_ref().and_then(as_page).or(self.requested_page);
                let total = next.total_pages.as_ref().and_then(as_page);
                let more = match (next.has_more.as_ref().and_then(as_flag), total, current) {
                    (Some(false), _, _) => false,
                    (_, Some(t), Some(c)) => c < t,
                    (Some(true), _, _) => true,
                    (None, _, _) => false,
                };
                if !more {
                    self.finished = true;
                    return;
                }
                let Some(c) = current else {
                    self.deferred = Some(Error::Pagination {
                        reason: "the answer says more pages follow but not which page it is".to_owned(),
                    });
                    return;
                };
                self.seen_pages.insert(c);
                let n = c.saturating_add(1);
                if self.seen_pages.contains(&n) {
                    self.deferred = Some(looped(format!("page {c}")));
                } else {
                    self.request_page(n);
                }
            }
        }
    }

    fn request_page(&mut self, page: u32) {
        self.seen_pages.insert(page);
        self.op.set_page(page);
        self.requested_page = Some(page);
    }
}

impl Session {
    /// Follows a listing: one item per page (the page's `data`), in order, until the
    /// service says there is no more. The stream ends with an error when a page fails or
    /// the service repeats a cursor or page (which would loop forever).
    pub fn pages<'a, O: Paginated + 'a>(&'a self, op: O) -> impl Stream<Item = Result<O::Data, Error>> + 'a {
        self.pages_with(op, CallOptions::default())
    }

    /// [`pages`](Self::pages) with per-call settings for every page, and
    /// [`CallOptions::max_pages`] to bound how many pages are followed.
    pub fn pages_with<'a, O: Paginated + 'a>(
        &'a self,
        op: O,
        options: CallOptions,
    ) -> impl Stream<Item = Result<O::Data, Error>> + 'a {
        // The page the caller starts from, read from the request it writes, so that a
        // first answer naming the same page as next is seen as the last one.
        let mut first = RequestWriter::new(O::ROUTE);
        let requested_page = match (O::STYLE, op.write(&mut first)) {
            (PageStyle::Page | PageStyle::PageSize, Ok(())) => {
                first.query_value("page").and_then(|p| p.trim().parse().ok())
            }
            _ => None,
        };
        let listing = Listing {
            op,
            finished: false,
            deferred: None,
            seen_cursors: HashSet::new(),
            seen_pages: HashSet::new(),
            requested_page,
            fetched: 0,
        };
        let max_pages = options.max_pages;
        let options = std::sync::Arc::new(options);
        futures::stream::try_unfold(listing, move |mut listing| {
            let options = std::sync::Arc::clone(&options);
            async move {
                if let Some(error) = listing.deferred.take() {
                    return Err(error);
                }
                if listing.finished {
                    return Ok(None);
                }
                if max_pages.is_some_and(|max| listing.fetched >= max) {
                    return Err(Error::Pagination {
                        reason: format!("the listing has more than the {} pages allowed", listing.fetched),
                    });
                }
                listing.fetched += 1;
                let answer = self.send_raw(&listing.op, &options).await?;
                if answer.pending {
                    return Err(Error::Pagination {
                        reason: "the service answered a page as still being processed".to_owned(),
                    });
                }
                let Some(raw) = answer.data.as_deref() else {
                    return Ok(None);
                };
                let item: O::Data = self.inner.decode_data(&answer, raw)?;
                let next: Continuation = serde_json::from_str(raw.get()).unwrap_or_default();
                listing.advance(next);
                Ok(Some((item, listing)))
            }
        })
    }
}
