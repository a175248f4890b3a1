//! What a generated request is to the runtime: an [`Operation`] that writes itself, and a
//! [`Paginated`] listing that can be asked for its next page.

use super::writer::RequestWriter;
use crate::error::Error;
use crate::json::FromJson;
use crate::service::{PageStyle, Route};

/// One operation of the API, as generated from the spec.
pub trait Operation: Send + Sync {
    /// The type of the answer's `data` ([`Json`](crate::Json) unless the spec types it).
    type Data: FromJson + Send + 'static;
    /// The operation's route.
    const ROUTE: &'static Route;
    /// Writes the request's path values, query, body and headers: one straight-line call
    /// per field.
    fn write(&self, w: &mut RequestWriter) -> Result<(), Error>;
    /// Each field's wire key and its name in the request type (`("accountName",
    /// "customer_name")`): what names a refused field as the caller's code does
    /// ([`Error::field`](crate::Error::field)). Generated for every request.
    const FIELDS: &'static [(&'static str, &'static str)] = &[];
    /// The caller's unique reference that makes a money-moving retry safe
    /// (an idempotency key), if set.
    fn idempotency_key(&self) -> Option<&str> {
        None
    }
}

/// A listing operation that [`Session::pages`](crate::Session::pages) and
/// [`Session::items`](crate::Session::items) can follow.
pub trait Paginated: Operation + Clone {
    /// One record of a page.
    type Item: Send + 'static;
    /// How the listing asks for its next page.
    const STYLE: PageStyle;
    /// The records of one page, in order.
    fn items(page: Self::Data) -> Vec<Self::Item>;
    /// Sets the cursor of the next request (cursor style).
    fn set_cursor(&mut self, cursor: Option<String>);
    /// Sets the page number of the next request (page and page-size styles).
    fn set_page(&mut self, page: u32);
    /// The page number this request asks for, if it sets one.
    fn page(&self) -> Option<u32> {
        None
    }
}
