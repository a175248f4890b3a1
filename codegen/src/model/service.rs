//! The `service` section: environments, the envelope's and pages' keys, the codes, the
//! other spellings of paths, the token operations, and how answers are read and what each
//! reading rests on.

use payspec_vocabulary::{Answers as VocabularyAnswers, DateLayout, EnvelopeKind, Owned};

/// A credential the service takes as it is, in a header of its own
/// (`service.credentials`): a static secret key, a public key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Credential {
    /// Its name (snake_case): what an operation's `auth` names, the builder's `key(name, ..)`
    /// and `PAYSPEC_<NAME>`.
    pub name: String,
    /// The header it travels in.
    pub header: String,
    /// What the header's value starts with before it (`Bearer `), or nothing.
    pub prefix: String,
    /// Whether it is a secret (unless the spec says `secret: false`, as for a public key).
    pub secret: bool,
    /// What a reader is told of it.
    pub note: Option<String>,
}

/// How a field's or parameter's name is spelled on the wire when it names no `wire` key of
/// its own (`service.wire_case`; `camelCase` unless the spec says otherwise).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WireCase {
    /// `accountNumber`.
    #[default]
    Camel,
    /// `account_number`: the names as the spec writes them.
    Snake,
    /// `AccountNumber`.
    Pascal,
    /// `account-number`.
    Kebab,
    /// `ACCOUNT_NUMBER`.
    ScreamingSnake,
}

impl WireCase {
    /// Every case, with how the spec writes it.
    pub const ALL: [(WireCase, &'static str); 5] = [
        (WireCase::Camel, "camelCase"),
        (WireCase::Snake, "snake_case"),
        (WireCase::Pascal, "PascalCase"),
        (WireCase::Kebab, "kebab-case"),
        (WireCase::ScreamingSnake, "SCREAMING_SNAKE_CASE"),
    ];

    /// The wire key of the spec's `name` (snake_case) in this case.
    pub fn of(self, name: &str) -> String {
        use heck::{ToKebabCase, ToLowerCamelCase, ToShoutySnakeCase, ToSnakeCase, ToUpperCamelCase};
        match self {
            WireCase::Camel => name.to_lower_camel_case(),
            WireCase::Snake => name.to_snake_case(),
            WireCase::Pascal => name.to_upper_camel_case(),
            WireCase::Kebab => name.to_kebab_case(),
            WireCase::ScreamingSnake => name.to_shouty_snake_case(),
        }
    }
}

/// Another spelling of a path prefix that the live service answers as the documented one
/// (`service.also_paths`), with where that is shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AlsoPath {
    /// The documented prefix, as the spec's routes begin (`/v1/checkout/`).
    pub prefix: String,
    /// The other spelling the service answers the same (`/sandbox/checkout/`).
    pub also: String,
    /// What it rests on: a developer guide or published traffic.
    pub source: FactSource,
    /// Where it is shown.
    pub seen_in: String,
    /// What a reader is told.
    pub note: String,
}

impl AlsoPath {
    /// `path` written with the documented prefix, when it begins with the other spelling.
    pub fn documented(&self, path: &str) -> Option<String> {
        path.strip_prefix(self.also.as_str()).map(|rest| format!("{}{rest}", self.prefix))
    }
}

/// A rule of the live service beyond its document, over every route or every value of a
/// kind (`service.also_takes`): taken by the service-like sandbox, refused by the strict
/// one, never sent by the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ServiceRule {
    /// A path written with one trailing slash is answered as the path without it.
    TrailingSlash,
    /// A date and time the document writes `YYYY-MM-DDThh:mm:ss` is also read as an ISO-8601
    /// instant with milliseconds and `Z` (`YYYY-MM-DDThh:mm:ss.sssZ`, a JavaScript `Date`).
    IsoInstants,
}

impl ServiceRule {
    /// Every rule with the spec's word for it.
    pub const ALL: [(ServiceRule, &'static str); 2] =
        [(ServiceRule::TrailingSlash, "trailing_slash"), (ServiceRule::IsoInstants, "iso8601_instants")];

    /// The other layout this rule has the service read a date and time written in `layout`
    /// by its document, if it reaches that layout.
    pub fn also_layout(self, layout: DateLayout) -> Option<DateLayout> {
        match (self, layout) {
            (ServiceRule::IsoInstants, DateLayout::Seconds) => Some(DateLayout::Instant),
            _ => None,
        }
    }
}

/// A rule the live service follows, with where it is shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TakenRule {
    /// The rule.
    pub rule: ServiceRule,
    /// What it rests on: a developer guide or published traffic.
    pub source: FactSource,
    /// Where it is shown.
    pub seen_in: String,
    /// What a reader is told.
    pub note: String,
}

/// How the answers to an operation are read: the reading the runtime applies (the spec's
/// vocabulary, [`payspec_vocabulary::Answers`]), and what that reading rests on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answers {
    /// What the client reads the answers by: success, refusal and pending codes, states,
    /// awaiting rules, the envelope.
    pub reading: VocabularyAnswers<Owned>,
    /// Why these lists, where they differ from the service's (doc lines).
    pub note: Vec<String>,
    /// What this block's reading of the service rests on, where it says (not inherited).
    pub evidence: Option<Evidence>,
    /// Whether the operation (or the service) declares this block itself, rather than
    /// inheriting it.
    pub declared: bool,
}

impl Answers {
    /// The spec's word for how the answers wrap their data: `standard` (`{code,
    /// description, data}`), `response_code` (the envelope's second spellings) or
    /// `unwrapped`.
    pub fn envelope_word(&self) -> &'static str {
        match &self.reading.envelope {
            EnvelopeKind::Wrapped { spelling: 0, .. } => "standard",
            EnvelopeKind::Wrapped { .. } => "response_code",
            EnvelopeKind::Unwrapped => "unwrapped",
        }
    }
}

/// What a reading of the service in the spec rests on: a source, and where it is shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Evidence {
    /// The kind of source.
    pub source: ReadingSource,
    /// The guide, capture or document section that shows it (required for guides and
    /// observed traffic).
    pub seen_in: Option<String>,
}

/// What a reading of the service rests on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReadingSource {
    /// The vendor's OpenAPI document.
    Reference,
    /// The vendor's developer guides.
    DeveloperDocs,
    /// Traffic of the live service that integrators published.
    Observed,
    /// An inference from other facts, which the block's note states.
    Inference,
}

impl ReadingSource {
    /// Every source with its spec keyword.
    pub const ALL: [(&'static str, ReadingSource); 4] = [
        ("reference", ReadingSource::Reference),
        ("developer_docs", ReadingSource::DeveloperDocs),
        ("observed", ReadingSource::Observed),
        ("inference", ReadingSource::Inference),
    ];

    /// The spec keyword.
    pub fn as_str(self) -> &'static str {
        ReadingSource::ALL.iter().find(|(_, s)| *s == self).map_or("inference", |(name, _)| name)
    }
}

/// The keys of a page's data that say where the next page starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageKeys {
    /// Cursor listings: the next cursor (`cursor`).
    pub cursor: String,
    /// Page listings: the next page's number (`nextPage`).
    pub next_page: String,
    /// Page listings: this page's number, the first present (`page`, `currentPage`).
    pub current_page: Vec<String>,
    /// Page-size listings: whether more pages follow (`hasMore`), or, where `last_page`,
    /// that this page is the last.
    pub has_more: String,
    /// Whether the flag at `has_more` says this page is the last (`service.pagination.last_page`).
    pub last_page: bool,
    /// The number of the first page: 1, or 0.
    pub first_page: u32,
    /// Page-size listings: this page's number (`page`).
    pub page: String,
    /// Page-size listings: the number of pages (`totalPages`).
    pub total_pages: String,
    /// After listings: the key of each record the next page starts after (`id`).
    pub record_id: String,
}

/// One envelope code the service documents: a variant of the generated `ServiceCode`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceCode {
    /// The code as it travels (`"02"`).
    pub code: String,
    /// Its snake_case name (`validation`).
    pub name: String,
    /// What it means and what to do.
    pub doc: String,
    /// Whether the service says the same request may be sent again.
    pub retry: bool,
}

/// A named base URL.
#[derive(Debug, Clone)]
pub struct Environment {
    /// `live`, `sandbox`, ...
    pub name: String,
    /// The base URL, without a trailing slash.
    pub url: String,
}

/// The names of the token operations.
#[derive(Debug, Clone)]
pub struct TokenOperations {
    /// Obtains a token from client credentials.
    pub issue: String,
    /// Exchanges a refresh token for a new token, where the service can.
    pub refresh: Option<String>,
    /// Revokes an access token, where the service can.
    pub revoke: Option<String>,
}

impl TokenOperations {
    /// Whether `operation` is one of them: its answers carry secrets.
    pub fn includes(&self, operation: &str) -> bool {
        self.named().any(|(_, name)| name == operation)
    }

    /// Each operation named, with its role: `issue`, `refresh`, `revoke`.
    pub fn named(&self) -> impl Iterator<Item = (&'static str, &str)> {
        [("issue", Some(&self.issue)), ("refresh", self.refresh.as_ref()), ("revoke", self.revoke.as_ref())]
            .into_iter()
            .filter_map(|(role, name)| Some((role, name?.as_str())))
    }
}

/// What a recorded disagreement rests on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum FactSource {
    /// The vendor's OpenAPI document, read against the interface (what no `source` says).
    #[default]
    Reference,
    /// The vendor's developer guides, beyond its OpenAPI document.
    DeveloperDocs,
    /// Requests, answers or deliveries of the live service, published by integrators.
    Observed,
}

impl FactSource {
    /// The spec's word for it.
    pub fn as_str(self) -> &'static str {
        match self {
            FactSource::Reference => "reference",
            FactSource::DeveloperDocs => "developer_docs",
            FactSource::Observed => "observed",
        }
    }

    /// Whether it is a fact about the live service rather than about its document.
    pub fn is_service(self) -> bool {
        self != FactSource::Reference
    }
}
