//! The serde-shaped mirror of the keys an answer is read by: the envelope's
//! (`service.envelope`), an error answer's (`service.errors`) and a page's
//! (`service.pagination`).

use serde::Deserialize;

/// The keys of the answer envelope; each omitted one keeps the format's default.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawEnvelopeKeys {
    /// What says a `2xx` answer is a success: `code` (the default), `flag`, `status`.
    #[serde(default)]
    pub success: Option<String>,
    #[serde(default)]
    pub code: Option<Vec<String>>,
    #[serde(default)]
    pub description: Option<Vec<String>>,
    #[serde(default)]
    pub data: Option<String>,
    /// `null` (or `~`): the service sends no flag.
    #[serde(default, deserialize_with = "super::some_or_null")]
    pub flag: Option<Option<String>>,
}

/// Where an error answer holds its code and description (`service.errors`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawErrorKeys {
    /// The top-level key of the object that holds them; absent: the answer's top level.
    #[serde(default)]
    pub at: Option<String>,
    #[serde(default)]
    pub code: Vec<String>,
    #[serde(default)]
    pub description: Vec<String>,
}

/// The keys of page data; each omitted one keeps the format's default.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawPageKeys {
    #[serde(default)]
    pub cursor: Option<String>,
    #[serde(default)]
    pub next_page: Option<String>,
    #[serde(default)]
    pub current_page: Option<Vec<String>>,
    #[serde(default)]
    pub has_more: Option<String>,
    /// The flag that says this page is the last (instead of `has_more`).
    #[serde(default)]
    pub last_page: Option<String>,
    #[serde(default)]
    pub page: Option<String>,
    #[serde(default)]
    pub total_pages: Option<String>,
    /// The number of the first page: 1 (the default) or 0.
    #[serde(default)]
    pub first_page: Option<u32>,
    /// The key of each record the next page starts after (`after` listings).
    #[serde(default)]
    pub record_id: Option<String>,
}
