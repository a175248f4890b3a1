//! Following a listing page by page ([`Listing`]). The continuation fields are read from
//! the raw answer, so this works whatever type the operation's data is.

use std::collections::HashSet;
use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll};

use std::sync::Arc;

use futures_util::Stream;

use crate::answer::RawAnswer;
use crate::error::{Error, ErrorDetail};
use crate::json::{Json, Path, Reader};
use crate::orchestrate::{CallOptions, Orchestrator};
use crate::request::Paginated;
use crate::service::PageStyle;

/// The most pages a listing follows unless [`CallOptions::max_pages`] says otherwise: a
/// service that answers a new cursor (or `hasMore: true`) forever ends the listing with
/// [`ErrorDetail::Pagination`] after this many pages, not never.
pub const DEFAULT_MAX_PAGES: u32 = 1000;

/// The continuation fields of a page, whatever their JSON type (numbers with their exact
/// text), read at the paths the listing's [`PageStyle`] names: keys joined with `.`, from
/// the page's data (`cursor`, `meta.page`), or from the whole answer when the path starts
/// with `$.` (`$.meta.pageCount`).
#[derive(Default)]
struct Continuation {
    /// The next cursor, or the next page's number.
    next: Option<Json>,
    /// Whether more pages follow.
    more: Option<Json>,
    /// This page's number (the first of the style's paths present).
    current: Option<Json>,
    /// The number of pages.
    total: Option<Json>,
}

/// A path wanted, with the slot its value goes to.
type Wanted<'a> = (usize, &'a str);

/// Where a path of a [`PageStyle`] starts when it starts at the whole answer.
const FROM_ANSWER: &str = "$.";

impl Continuation {
    /// The fields of a page (the first of each; `null` is none). A page that is not JSON,
    /// or whose path leads through something other than an object, has none there: reading
    /// it into the page's type reports it.
    fn read(answer: &RawAnswer, data: &crate::answer::DataAt, style: PageStyle) -> Self {
        // Each wanted path with its slot: 0 next, 1 more, 2 total, 3.. this page's number
        // by the rank of its path.
        let mut wanted: Vec<Wanted<'_>> = Vec::with_capacity(4);
        match style {
            PageStyle::Cursor { next } => wanted.push((0, next)),
            PageStyle::Page { next, current } => {
                wanted.push((0, next));
                wanted.extend(current.iter().enumerate().map(|(rank, path)| (3 + rank, *path)));
            }
            PageStyle::PageSize { more, current, total, .. } => {
                wanted.extend([(1, more), (3, current), (2, total)]);
            }
            // The records whole, for their last one's id (the data itself when it is the
            // list, read below).
            PageStyle::After { more, records, .. } => {
                wanted.push((1, more));
                if !records.is_empty() {
                    wanted.push((0, records));
                }
            }
        }
        let mut values: Vec<Option<Json>> = vec![None; 3 + wanted.len()];
        let (from_answer, from_data): (Vec<Wanted<'_>>, Vec<Wanted<'_>>) =
            wanted.into_iter().partition(|(_, path)| path.starts_with(FROM_ANSWER));
        if !from_data.is_empty() {
            let _ = collect(&mut answer.data_reader(data), &Path::root("data"), &from_data, &mut values);
        }
        if !from_answer.is_empty() {
            let from_answer: Vec<(usize, &str)> =
                from_answer.into_iter().map(|(slot, path)| (slot, &path[FROM_ANSWER.len()..])).collect();
            let _ = collect(&mut Reader::new(&answer.body), &Path::root("answer"), &from_answer, &mut values);
        }
        if let PageStyle::After { records, id, .. } = style {
            let list = if records.is_empty() {
                answer.data_reader(data).json(&Path::root("data")).ok()
            } else {
                values[0].take()
            };
            values[0] = last_id(list, id);
        }
        let mut values = values.into_iter();
        let mut take = || values.next().flatten();
        let (next, more, total) = (take(), take(), take());
        Continuation { next, more, total, current: values.flatten().next() }
    }
}

/// Reads the values at `wanted` paths (each with its slot in `out`) from the object that
/// comes next in `reader`: the first of each key, `null` as none. What is not an object is
/// stepped over.
fn collect(
    reader: &mut Reader<'_>,
    at: &Path<'_>,
    wanted: &[(usize, &str)],
    out: &mut [Option<Json>],
) -> Result<(), crate::json::DecodeError> {
    if reader.kind() != "an object" {
        return reader.skip(at);
    }
    reader.object(at, |key, reader| {
        let here: Vec<(usize, &str)> = wanted
            .iter()
            .filter_map(|(slot, path)| {
                let (head, rest) = path.split_once('.').unwrap_or((path, ""));
                (head == key).then_some((*slot, rest))
            })
            .collect();
        if here.is_empty() {
            return reader.skip(at);
        }
        if here.iter().all(|(_, rest)| !rest.is_empty()) {
            return collect(reader, &at.key(key), &here, out);
        }
        // The value itself is wanted (and perhaps paths within it).
        let value = reader.json(at)?;
        for (slot, rest) in here {
            let found = if rest.is_empty() {
                Some(&value)
            } else {
                rest.split('.').try_fold(&value, |node, key| node.get(key))
            };
            if let (Some(place), Some(found)) = (out.get_mut(slot), found)
                && place.is_none()
                && !matches!(found, Json::Null)
            {
                *place = Some(found.clone());
            }
        }
        Ok(())
    })
}

/// The value at `id` (keys joined with `.`) of the last record of `list`, if it is a list
/// whose last record has one.
fn last_id(list: Option<Json>, id: &str) -> Option<Json> {
    let Some(Json::Array(mut records)) = list else { return None };
    let last = records.pop()?;
    id.split('.').try_fold(&last, |node, key| node.get(key)).filter(|v| !v.is_null()).cloned()
}

/// A cursor, as text: a number is sent back exactly as it came.
fn as_text(v: &Json) -> Option<String> {
    match v {
        Json::String(s) if !s.trim().is_empty() => Some(s.clone()),
        Json::Number(n) => Some(n.as_str().to_owned()),
        _ => None,
    }
}

fn as_page(v: &Json) -> Option<u32> {
    match v {
        Json::Number(n) => n.as_str().parse().ok(),
        Json::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

fn as_flag(v: &Json) -> Option<bool> {
    match v {
        Json::Bool(b) => Some(*b),
        Json::String(s) if s.eq_ignore_ascii_case("true") => Some(true),
        Json::String(s) if s.eq_ignore_ascii_case("false") => Some(false),
        _ => None,
    }
}

/// Where a listing stands between pages: the operation, and what has been seen.
struct Progress<O> {
    op: O,
    tracker: Tracker,
}

/// What a listing has seen, whatever its operation (so that following pages is compiled
/// once, not once per listing operation).
struct Tracker {
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

fn looped(what: String, pages_read: u32) -> Error {
    ErrorDetail::Pagination {
        reason: format!("the service sent {what} again, so following it would never end"),
        pages_read,
    }
    .into()
}

impl Tracker {
    /// Whether to ask for another page: not when finished, an error when one was found
    /// after the last page or the listing is past its limit.
    fn go_on(&mut self, max_pages: u32) -> Result<bool, Error> {
        if let Some(error) = self.deferred.take() {
            return Err(error);
        }
        if self.finished {
            return Ok(false);
        }
        if self.fetched >= max_pages {
            return Err(Error::from(ErrorDetail::Pagination {
                reason: format!(
                    "the listing has more than the {max_pages} pages allowed (raise the limit with \
                     `CallOptions::max_pages`)"
                ),
                pages_read: self.fetched,
            }));
        }
        Ok(true)
    }

    /// Counts a page received; a page still being processed stops the listing.
    fn received(&mut self, answer: &RawAnswer) -> Result<(), Error> {
        if answer.pending || answer.status_pending() {
            return Err(Error::from(ErrorDetail::Pagination {
                reason: "the service answered a page as still being processed".to_owned(),
                pages_read: self.fetched,
            }));
        }
        self.fetched += 1;
        Ok(())
    }
}

/// The request for the next page.
enum NextPage {
    Cursor(String),
    Page(u32),
}

impl<O: Paginated> Progress<O> {
    /// Reads the continuation of the page just received and prepares the next request.
    fn advance(&mut self, next: Continuation) {
        match self.tracker.advance(O::STYLE, next) {
            Some(NextPage::Cursor(cursor)) => self.op.set_cursor(Some(cursor)),
            Some(NextPage::Page(page)) => self.op.set_page(page),
            None => {}
        }
    }
}

impl Tracker {
    /// Reads the continuation of the page just received: the next page to ask for, or
    /// none when the listing is finished or must stop (with the error for after the page).
    fn advance(&mut self, style: PageStyle, next: Continuation) -> Option<NextPage> {
        match style {
            PageStyle::Cursor { .. } => match next.next.as_ref().and_then(as_text) {
                None => self.finished = true,
                Some(cursor) => {
                    if self.seen_cursors.insert(cursor.clone()) {
                        return Some(NextPage::Cursor(cursor));
                    }
                    self.deferred = Some(looped("a cursor it had already sent".to_owned(), self.fetched));
                }
            },
            PageStyle::Page { .. } => {
                let current = next.current.as_ref().and_then(as_page).or(self.requested_page);
                if let Some(c) = current {
                    self.seen_pages.insert(c);
                }
                match next.next.as_ref().and_then(as_page) {
                    // Zero: no more pages.
                    None | Some(0) => self.finished = true,
                    Some(n) if Some(n) == current => self.finished = true,
                    Some(n) if self.seen_pages.contains(&n) => {
                        self.deferred = Some(looped(format!("page {n} as the next page"), self.fetched));
                    }
                    Some(n) => return Some(self.request_page(n)),
                }
            }
            PageStyle::After { last, .. } => {
                // More follow only where the flag says so; then after the last record.
                let more = next.more.as_ref().and_then(as_flag).is_some_and(|flag| flag != last);
                if !more {
                    self.finished = true;
                    return None;
                }
                match next.next.as_ref().and_then(as_text) {
                    Some(id) if self.seen_cursors.insert(id.clone()) => return Some(NextPage::Cursor(id)),
                    Some(id) => {
                        self.deferred = Some(looped(format!("`{id}` as its last record"), self.fetched))
                    }
                    None => {
                        self.deferred = Some(Error::from(ErrorDetail::Pagination {
                            reason:
                                "the answer says more pages follow but its page has no record to start after"
                                    .to_owned(),
                            pages_read: self.fetched,
                        }));
                    }
                }
            }
            PageStyle::PageSize { last, first, .. } => {
                // The page the answer says, else the one asked for, else (asked for none)
                // the service's first.
                let current = next
                    .current
                    .as_ref()
                    .and_then(as_page)
                    .or(self.requested_page)
                    .or_else(|| self.seen_pages.is_empty().then_some(first));
                let total = next.total.as_ref().and_then(as_page);
                // The flag as the spec states it: more follow, or this page is the last.
                let flag = next.more.as_ref().and_then(as_flag).map(|flag| flag != last);
                let more = match (flag, total, current) {
                    (Some(false), _, _) => false,
                    // The pages before this one and this one, against how many there are.
                    (_, Some(t), Some(c)) => c.saturating_add(1).saturating_sub(first) < t,
                    (Some(true), _, _) => true,
                    (None, _, _) => false,
                };
                if !more {
                    self.finished = true;
                    return None;
                }
                let Some(c) = current else {
                    self.deferred = Some(Error::from(ErrorDetail::Pagination {
                        reason: "the answer says more pages follow but not which page it is".to_owned(),
                        pages_read: self.fetched,
                    }));
                    return None;
                };
                self.seen_pages.insert(c);
                let n = c.saturating_add(1);
                if self.seen_pages.contains(&n) {
                    self.deferred = Some(looped(format!("page {c}"), self.fetched));
                } else {
                    return Some(self.request_page(n));
                }
            }
        }
        None
    }

    fn request_page(&mut self, page: u32) -> NextPage {
        self.seen_pages.insert(page);
        self.requested_page = Some(page);
        NextPage::Page(page)
    }
}

/// A listing being followed: a [`Stream`] of records or of pages, in order, that ends
/// after the last one, or with an error (a page failed, the service repeated a cursor or
/// page, or [`CallOptions::max_pages`] was passed).
///
/// It needs no pinning and no import: `while let Some(record) = listing.next().await`
/// reads it, and [`all`](Self::all) collects it.
pub struct Listing<'a, T> {
    stream: Pin<Box<dyn Stream<Item = Result<T, Error>> + Send + 'a>>,
}

impl<T> fmt::Debug for Listing<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Listing(..)")
    }
}

impl<'a, T> Listing<'a, T> {
    fn new(stream: impl Stream<Item = Result<T, Error>> + Send + 'a) -> Self {
        Listing { stream: Box::pin(stream) }
    }

    /// The next record (or page), `None` after the last.
    pub async fn next(&mut self) -> Option<Result<T, Error>> {
        futures_util::StreamExt::next(&mut self.stream).await
    }

    /// Every remaining record (or page), or the first error.
    pub async fn all(mut self) -> Result<Vec<T>, Error> {
        let mut out = Vec::new();
        while let Some(item) = self.next().await {
            out.push(item?);
        }
        Ok(out)
    }
}

impl<T> Stream for Listing<'_, T> {
    type Item = Result<T, Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.stream.as_mut().poll_next(cx)
    }
}

/// The records of a listing, across its pages: what `Session::items_with` returns.
pub(crate) fn items<'a, O: Paginated + 'a>(
    orchestrator: &'a Arc<Orchestrator>,
    op: O,
    options: CallOptions,
) -> Listing<'a, O::Item> {
    let pages = pages(orchestrator, op, options);
    let records = futures_util::StreamExt::flat_map(pages, |page| {
        let records: Vec<Result<O::Item, Error>> = match page {
            Ok(page) => O::items(page).into_iter().map(Ok).collect(),
            Err(error) => vec![Err(error)],
        };
        futures_util::stream::iter(records)
    });
    Listing::new(records)
}

/// The pages of a listing, one item per page (the page's `data`), in order, until the
/// service says there is no more: what `Session::pages_with` returns.
pub(crate) fn pages<'a, O: Paginated + 'a>(
    orchestrator: &'a Arc<Orchestrator>,
    op: O,
    options: CallOptions,
) -> Listing<'a, O::Data> {
    // The page the caller starts from, so that a first answer naming the same page as
    // next is seen as the last one.
    let requested_page = op.page();
    let progress = Progress {
        op,
        tracker: Tracker {
            finished: false,
            deferred: None,
            seen_cursors: HashSet::new(),
            seen_pages: HashSet::new(),
            requested_page,
            fetched: 0,
        },
    };
    let max_pages = options.max_pages.unwrap_or(DEFAULT_MAX_PAGES);
    let options = Arc::new(options);
    Listing::new(futures_util::stream::try_unfold(progress, move |mut listing| {
        let options = Arc::clone(&options);
        async move {
            if !listing.tracker.go_on(max_pages)? {
                return Ok(None);
            }
            let answer = orchestrator.send_raw(&listing.op, &options).await?;
            listing.tracker.received(&answer)?;
            let Some(data) = answer.data.clone() else {
                return Ok(None);
            };
            let next = Continuation::read(&answer, &data, O::STYLE);
            let item: O::Data = orchestrator.decode_data(&answer, &data)?;
            listing.advance(next);
            Ok(Some((item, listing)))
        }
    }))
}
