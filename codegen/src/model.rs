//! The validated spec: what every back end (audit, emitter, CLI) sees.
//!
//! Everything here has passed validation: a parameter's wire key is resolved, its type is
//! known, every path variable has its parameter, and no `Option` stands for something
//! validation already required.

use std::fmt;

/// A one-based line and column in the spec file: where a spec item is declared, and where
/// the loader places an error.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Location {
    /// One-based line.
    pub line: usize,
    /// One-based column.
    pub column: usize,
}

impl Location {
    /// The first character of the file.
    pub const START: Location = Location { line: 1, column: 1 };
}

/// Type names the generated code uses unqualified: a spec type with one of these names
/// would hide it, so the loader refuses it and the emitter never picks one.
pub const RESERVED_TYPE_NAMES: [&str; 24] = [
    "Self",
    "String",
    "Option",
    "Some",
    "None",
    "Vec",
    "Result",
    "Ok",
    "Err",
    "Box",
    "Default",
    "From",
    "Into",
    "Clone",
    "Copy",
    "Debug",
    "PartialEq",
    "Eq",
    "Hash",
    "Send",
    "Sync",
    "Sized",
    "ToString",
    "Iterator",
];

/// A validated spec.
#[derive(Debug, Clone)]
pub struct Spec {
    /// The file the spec was read from, as the caller named it.
    pub source: String,
    /// The service's title.
    pub title: String,
    /// Named base URLs (`live`, `sandbox`).
    pub environments: Vec<Environment>,
    /// The environment a client uses unless told otherwise (`service.default_environment`,
    /// else the first one listed).
    pub default_environment: String,
    /// The operations the client calls itself to obtain, refresh and revoke tokens.
    /// `None` for a service whose operations send no bearer token.
    pub token_operations: Option<TokenOperations>,
    /// The header that carries the account id on operations whose auth sends it
    /// (`service.account_header`, default `accountId`).
    pub account_header: String,
    /// The headers the service announces its rate limit in (`service.rate_limit`), if it
    /// does: limit, remaining, window, lowercase.
    pub rate_limit: Option<[String; 3]>,
    /// The header a client sends a request id of its own in, and reads the service's
    /// from when an answer carries it (`service.request_id_header`), lowercase.
    pub request_id_header: Option<String>,
    /// Other spellings of path prefixes the live service answers (`service.also_paths`):
    /// never sent by the client, routed by the service-like sandbox, refused by the strict one.
    pub also_paths: Vec<AlsoPath>,
    /// The keys of the answer envelope (`service.envelope`).
    pub envelope: EnvelopeKeys,
    /// The keys of a page's data that lead to the next page (`service.pagination`).
    pub page_keys: PageKeys,
    /// How the service signs its webhook notifications (`service.webhooks`), if it sends
    /// any.
    pub webhooks: Option<Webhooks>,
    /// The envelope codes the service documents (`service.codes`), in file order.
    pub codes: Vec<ServiceCode>,
    /// Typed identifiers (`SubAccountId`), each becoming a newtype.
    pub identifiers: Vec<Identifier>,
    /// Resource groups, in file order.
    pub groups: Vec<Group>,
    /// Declared shapes of answers' `data`.
    pub shapes: Vec<Shape>,
    /// How answers are read unless an operation says otherwise.
    pub answers: Answers,
    /// Operations, in file order.
    pub operations: Vec<Operation>,
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

/// How the answers to an operation are read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answers {
    /// Envelope codes that mean success.
    pub success_codes: Vec<String>,
    /// Envelope codes that prove a refusal: the request was not applied. For a money
    /// operation, any other code is an outcome the client cannot settle.
    pub refusal_codes: Vec<String>,
    /// The key of the answer's data that holds the operation's state (`status`).
    pub status_field: String,
    /// State values that mean the operation finished as asked; when listed, any state
    /// that is not (and is not pending or failed) is read as pending.
    pub success_statuses: Vec<String>,
    /// State values that mean the operation is still in flight.
    pub pending_statuses: Vec<String>,
    /// State values that mean the operation failed or was undone (the money did not stay
    /// moved).
    pub failed_statuses: Vec<String>,
    /// Envelope descriptions that mean the operation is still in flight.
    pub pending_descriptions: Vec<String>,
    /// Envelope codes of a `2xx` answer that mean the operation is still in flight.
    pub pending_codes: Vec<String>,
    /// Finished answers that still wait on someone, told by a text of their data.
    pub awaiting: Vec<Awaiting>,
    /// Texts that, in a refusal, say the request's reference was used already.
    pub reference_taken: Vec<String>,
    /// How the answer wraps its data.
    pub envelope: EnvelopeKind,
    /// Why these lists, where they differ from the service's (doc lines).
    pub note: Vec<String>,
    /// What this block's reading of the service rests on, where it says (not inherited).
    pub evidence: Option<Evidence>,
    /// Whether the operation (or the service) declares this block itself, rather than
    /// inheriting it.
    pub declared: bool,
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

/// A finished answer that still waits on someone: the data's text at `field` holds
/// `contains` (ignoring ASCII case); `awaits` says what is awaited.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Awaiting {
    /// A top-level key of the answer's data.
    pub field: String,
    /// The text it holds when the answer waits.
    pub contains: String,
    /// What is awaited, for people.
    pub awaits: String,
}

/// The keys of a service's answer envelope. Where several are listed, the first present
/// counts; a `response_code` answer uses the second spelling of the code and description.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvelopeKeys {
    /// The keys of the code (`code`, `responseCode`).
    pub code: Vec<String>,
    /// The keys of the description (`description`, `responseMessage`, `message`).
    pub description: Vec<String>,
    /// The key of the data (`data`).
    pub data: String,
    /// The key of the envelope's own success flag (`status`), if the service sends one.
    pub flag: Option<String>,
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
    /// Page-size listings: whether more pages follow (`hasMore`).
    pub has_more: String,
    /// Page-size listings: this page's number (`page`).
    pub page: String,
    /// Page-size listings: the number of pages (`totalPages`).
    pub total_pages: String,
}

/// How a service signs its webhook notifications: an HMAC-SHA256, base64 in
/// `signature_header`, over the signed values of the body and the timestamp header,
/// joined with `:`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Webhooks {
    /// The header of the signature.
    pub signature_header: String,
    /// The header of the signing time (the last signed value).
    pub timestamp_header: String,
    /// The algorithm header and its value, if the service sends one.
    pub algorithm: Option<(String, String)>,
    /// The version header and its value, if the service sends one.
    pub version: Option<(String, String)>,
    /// The name of the signed value that is the event's kind.
    pub event_type: String,
    /// The name of the signed value that identifies the delivery (the replay key).
    pub request_id: String,
    /// The signed values, in order.
    pub signed: Vec<SignedValue>,
    /// The event kinds the service documents.
    pub events: Vec<String>,
    /// Where the body claims the amount (not signed), if it does.
    pub claimed_amount: Option<String>,
    /// Which events settle a payment, if the spec says.
    pub settles: Option<WebhookSettles>,
    /// The top-level key of the body that holds each event's payload, if payloads are
    /// declared.
    pub payload_key: Option<String>,
    /// Each event kind's payload shape (a shape under `shapes`), and where it was seen.
    pub payloads: Vec<WebhookPayload>,
}

/// The shape of one event kind's payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookPayload {
    /// The event kind, one of `events`.
    pub event: String,
    /// The shape of the value under the payload key.
    pub shape: String,
    /// Where deliveries of this kind were seen.
    pub seen_in: String,
}

/// Which webhook events name a payment's final state, and the signed value that names the
/// payment (what a waiting settle knows it by).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookSettles {
    /// The signed value (a name of `signed`).
    pub key: String,
    /// Event kind and the final state it says.
    pub events: Vec<(String, FinalState)>,
}

/// Where a payment ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FinalState {
    /// The money moved.
    Succeeded,
    /// The operation failed; the money did not move.
    Failed,
    /// The money went back to the payer.
    Refunded,
    /// A payment that had succeeded was undone.
    Reversed,
}

impl FinalState {
    /// Its variant in the runtime's `FinalState`.
    pub fn variant(self) -> &'static str {
        match self {
            FinalState::Succeeded => "Succeeded",
            FinalState::Failed => "Failed",
            FinalState::Refunded => "Refunded",
            FinalState::Reversed => "Reversed",
        }
    }
}

/// How a money operation's final state is read: which reads look it up, and which of their
/// answers' states are final.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settle {
    /// The ways to look it up, in the order they are tried.
    pub lookups: Vec<Lookup>,
    /// States that mean the money moved.
    pub succeeded: Vec<String>,
    /// States that mean it failed.
    pub failed: Vec<String>,
    /// States that mean the money went back.
    pub refunded: Vec<String>,
    /// States that mean a success was undone.
    pub reversed: Vec<String>,
    /// Keys of the lookup answer's data that name the payment.
    pub answer_keys: Vec<String>,
    /// The wire key of the lookup answer's data that holds the state, when it is not the
    /// lookup's `status_field`. A boolean there reads as the state `true` or `false`.
    pub state_field: Option<String>,
    /// How long the service documents that settling may take, in seconds, if it does.
    pub within_seconds: Option<u64>,
    /// Where the facts come from.
    pub note: Option<String>,
    /// What this reading of the service rests on, where the spec says.
    pub evidence: Option<Evidence>,
}

/// One way to look a payment up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lookup {
    /// The read operation.
    pub operation: String,
    /// Each of its parameters and where its value comes from.
    pub params: Vec<(String, KeySource)>,
}

/// Where a lookup parameter's value comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeySource {
    /// A field of the money operation's answer: field names, outermost first.
    Answer(Vec<String>),
    /// A parameter of the money operation's request.
    Request(String),
}

impl Lookup {
    /// Whether every value comes from the request (so the lookup works from the caller's
    /// references alone, after a restart).
    pub fn from_request_only(&self) -> bool {
        self.params.iter().all(|(_, source)| matches!(source, KeySource::Request(_)))
    }
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

/// One signed value of a webhook body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignedValue {
    /// Its snake_case name (a field of the generated `SignedFields`).
    pub name: String,
    /// Its place in the body: keys joined with `.`.
    pub path: String,
    /// Whether it is an RFC 3339 instant (and may hold colons).
    pub instant: bool,
}

/// How an answer wraps its data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EnvelopeKind {
    /// `{code, description, data}`
    Standard,
    /// `{responseCode, responseMessage, data}`
    ResponseCode,
    /// The data itself, with no envelope.
    Unwrapped,
}

impl EnvelopeKind {
    /// The spec's word for it.
    pub fn as_str(self) -> &'static str {
        match self {
            EnvelopeKind::Standard => "standard",
            EnvelopeKind::ResponseCode => "response_code",
            EnvelopeKind::Unwrapped => "unwrapped",
        }
    }
}

/// What an answer's data is, when the spec types it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnswerType {
    /// The type of the data, or of each item when `list`.
    pub ty: Type,
    /// Whether the data is a list.
    pub list: bool,
}

/// A header the service deduplicates a request on: the same key with the same body gets
/// the first answer instead of being applied again.
#[derive(Debug, Clone)]
pub struct IdempotencyHeader {
    /// The header name, e.g. `X-Idempotent-key`.
    pub wire: String,
    /// Who documents it.
    pub source: Origin,
    /// Where exactly, and what it promises.
    pub note: String,
}

impl Spec {
    /// Every reading of the service the spec makes (the service's and each operation's own
    /// `answers`, each `settle`), where it is declared, with its evidence if it says.
    pub fn readings(&self) -> Vec<(String, Option<&Evidence>)> {
        let mut out = Vec::new();
        if self.answers.declared {
            out.push(("service.answers".to_owned(), self.answers.evidence.as_ref()));
        }
        for op in &self.operations {
            if op.answers.declared {
                out.push((format!("operations.{}.answers", op.name), op.answers.evidence.as_ref()));
            }
            if let Some(settle) = &op.settle {
                out.push((format!("operations.{}.settle", op.name), settle.evidence.as_ref()));
            }
        }
        out
    }

    /// The operation called `name`.
    pub fn operation(&self, name: &str) -> Option<&Operation> {
        self.operations.iter().find(|op| op.name == name)
    }

    /// The group whose key is `key`.
    pub fn group(&self, key: &str) -> Option<&Group> {
        self.groups.iter().find(|g| g.key == key)
    }

    /// The shape called `name`.
    pub fn shape(&self, name: &str) -> Option<&Shape> {
        self.shapes.iter().find(|s| s.name == name)
    }

    /// Every route of every operation, canonical forms first within each operation.
    pub fn routes(&self) -> impl Iterator<Item = RouteRef<'_>> {
        self.operations.iter().flat_map(|op| {
            std::iter::once(RouteRef { operation: op, method: op.method, path: &op.path, alias: None }).chain(
                op.aliases.iter().map(move |alias| RouteRef {
                    operation: op,
                    method: alias.method,
                    path: &alias.path,
                    alias: Some(alias),
                }),
            )
        })
    }

    /// The field of a listing's answer that holds its records: the one list field of its
    /// answer shape (validation makes sure there is exactly one).
    pub fn page_items(&self, op: &Operation) -> Option<(&Shape, &Field)> {
        op.pagination?;
        let Some(AnswerType { ty: Type::Shape(name), list: false }) = &op.response else { return None };
        let shape = self.shape(name)?;
        let mut lists = shape.fields.iter().filter(|f| f.list);
        match (lists.next(), lists.next()) {
            (Some(field), None) => Some((shape, field)),
            _ => None,
        }
    }

    /// The number of operations whose answer data the spec types.
    pub fn typed_answers(&self) -> usize {
        self.operations.iter().filter(|op| op.response.is_some()).count()
    }

    /// The number of parameters over all operations.
    pub fn parameter_count(&self) -> usize {
        self.operations.iter().map(|op| op.params.len()).sum()
    }
}

/// The names of the token operations.
#[derive(Debug, Clone)]
pub struct TokenOperations {
    /// Obtains a token from client credentials.
    pub issue: String,
    /// Exchanges a refresh token for a new token.
    pub refresh: String,
    /// Revokes an access token.
    pub revoke: String,
}

impl TokenOperations {
    /// Whether `operation` is one of the three: its answers carry secrets.
    pub fn includes(&self, operation: &str) -> bool {
        [&self.issue, &self.refresh, &self.revoke].iter().any(|name| *name == operation)
    }
}

/// A named base URL.
#[derive(Debug, Clone)]
pub struct Environment {
    /// `live`, `sandbox`, ...
    pub name: String,
    /// The base URL, without a trailing slash.
    pub url: String,
}

/// A typed identifier.
#[derive(Debug, Clone)]
pub struct Identifier {
    /// UpperCamelCase name (`SubAccountId`).
    pub name: String,
    /// What it identifies.
    pub doc: String,
}

/// A resource group.
#[derive(Debug, Clone)]
pub struct Group {
    /// snake_case key (`transfers`).
    pub key: String,
    /// The interface's title (`Transfers`).
    pub title: String,
    /// What the group is for, one entry per line.
    pub doc: Vec<String>,
}

/// A declared shape of an answer's `data`.
#[derive(Debug, Clone)]
pub struct Shape {
    /// UpperCamelCase name.
    pub name: String,
    /// Doc lines.
    pub doc: Vec<String>,
    /// Fields in file order.
    pub fields: Vec<Field>,
}

/// A field of a shape.
#[derive(Debug, Clone)]
pub struct Field {
    /// snake_case Rust name.
    pub name: String,
    /// The JSON key.
    pub wire: String,
    /// Its type, or the type of each item when `list`.
    pub ty: Type,
    /// Whether it is a list.
    pub list: bool,
    /// The reference's allowed values, if it lists them (an open enumeration).
    pub values: Vec<String>,
    /// Whether the answer always carries it (present and not null).
    pub required: bool,
    /// Whether it must never be shown.
    pub secret: bool,
    /// Doc lines.
    pub doc: Vec<String>,
}

/// One operation of the service.
#[derive(Debug, Clone)]
pub struct Operation {
    /// Unique snake_case name.
    pub name: String,
    /// The key of its group.
    pub group: String,
    /// One line saying what it does.
    pub summary: String,
    /// More lines of documentation.
    pub doc: Vec<String>,
    /// The canonical method.
    pub method: Method,
    /// The canonical path.
    pub path: PathTemplate,
    /// Whether the interface or the reference brought it.
    pub origin: Origin,
    /// The credentials it sends.
    pub auth: Auth,
    /// What it does to the world, which decides when a retry is safe.
    pub effect: Effect,
    /// The name of the parameter whose value makes a retry safe.
    pub idempotency: Option<String>,
    /// A header carrying that value which the service deduplicates on.
    pub idempotency_header: Option<IdempotencyHeader>,
    /// How its answers are read (the service's defaults, with its own overrides).
    pub answers: Answers,
    /// How its answers are paged.
    pub pagination: Option<PageStyle>,
    /// How its final state is read, for a money operation that may answer pending.
    pub settle: Option<Settle>,
    /// Why a money operation's final state cannot be looked up, when the spec says so
    /// instead of `settle`.
    pub unsettled: Option<String>,
    /// The type of its answer's `data`; `None` when the spec leaves it untyped.
    pub response: Option<AnswerType>,
    /// Alternative forms of the same operation.
    pub aliases: Vec<Alias>,
    /// Other listings of this operation in the interface.
    pub also_listed_as: Vec<Listing>,
    /// Where the interface, the spec and the vendor's reference disagree about it.
    pub disagreements: Vec<Disagreement>,
    /// Its parameters, in file order.
    pub params: Vec<Param>,
    /// Sets of its parameters of which the caller sends exactly one.
    pub one_of: Vec<OneOf>,
    /// Where it is declared.
    pub location: Location,
}

/// Parameters of an operation of which exactly one is sent, each a key with its own
/// meaning (a transaction looked up by its id, or by the merchant's reference): the
/// generated request takes one value of an enum over them, so it cannot send none or two.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OneOf {
    /// Its snake_case name: the request's field (`key`).
    pub name: String,
    /// The parameters, in the spec's order; each is optional on the wire.
    pub params: Vec<String>,
    /// Doc lines.
    pub doc: Vec<String>,
}

/// What a body field of a token request carries: the client fills these itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenRole {
    /// The parameter's `fixed` value.
    Fixed(String),
    /// The client id (a parameter named `client_id`).
    ClientId,
    /// The client secret (`client_secret`).
    ClientSecret,
    /// The account id (`account_id`).
    AccountId,
    /// The refresh token of the last grant (`refresh_token`).
    RefreshToken,
    /// The access token being revoked (`access_token`).
    AccessToken,
}

impl TokenRole {
    /// The parameter names a token operation's client-filled parameters may have.
    pub const NAMES: [&'static str; 5] =
        ["client_id", "client_secret", "account_id", "refresh_token", "access_token"];

    /// What `param` of a token operation carries: its fixed value, or the credential or
    /// token its name says; `None` for any other parameter (left unsent).
    pub fn of(param: &Param) -> Option<TokenRole> {
        if let Some(fixed) = &param.fixed {
            return Some(TokenRole::Fixed(fixed.clone()));
        }
        Some(match param.name.as_str() {
            "client_id" => TokenRole::ClientId,
            "client_secret" => TokenRole::ClientSecret,
            "account_id" => TokenRole::AccountId,
            "refresh_token" => TokenRole::RefreshToken,
            "access_token" => TokenRole::AccessToken,
            _ => return None,
        })
    }
}

/// The field names of a token answer's shape that the client reads.
pub const TOKEN_GRANT_FIELDS: [&str; 3] = ["access_token", "refresh_token", "expires_at"];

impl Operation {
    /// The parameter called `name`.
    pub fn param(&self, name: &str) -> Option<&Param> {
        self.params.iter().find(|p| p.name == name)
    }

    /// The set of parameters of which exactly one is sent that `param` belongs to.
    pub fn one_of_with(&self, param: &str) -> Option<&OneOf> {
        self.one_of.iter().find(|set| set.params.iter().any(|p| p == param))
    }

    /// Parameters that travel in `location`.
    pub fn params_in(&self, location: ParamLocation) -> impl Iterator<Item = &Param> {
        self.params.iter().filter(move |p| p.location == location)
    }
}

/// One route of an operation: its canonical form or an alias.
/// What a recorded disagreement is about: the kind of difference `payspec diff` matches
/// it with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Concern {
    /// The operation's method or path, or a form one side lists and the other does not.
    Route,
    /// Where a parameter travels (path, query, header, body).
    Location,
    /// A wire key one side has and the other does not.
    WireKey,
    /// A parameter's type.
    Type,
    /// Whether a parameter is required.
    Required,
    /// A field of the answer (present on one side only, or typed otherwise).
    AnswerField,
    /// The bearer token or the `accountId` header.
    Auth,
    /// What the service does beyond its document, with nothing in the spec's own wire
    /// that differs from the document: a field its answers omit though the document calls
    /// it required, a value it also takes as text. Recorded with its evidence, never stale.
    Service,
    /// A fact for readers that no tool matches (the interface's names, say).
    Note,
}

impl Concern {
    /// Every concern with its spec keyword.
    pub const ALL: [(&'static str, Concern); 9] = [
        ("route", Concern::Route),
        ("location", Concern::Location),
        ("wire_key", Concern::WireKey),
        ("type", Concern::Type),
        ("required", Concern::Required),
        ("answer_field", Concern::AnswerField),
        ("auth", Concern::Auth),
        ("service", Concern::Service),
        ("note", Concern::Note),
    ];

    /// The spec keyword.
    pub fn as_str(self) -> &'static str {
        Concern::ALL.iter().find(|(_, c)| *c == self).map_or("note", |(name, _)| name)
    }
}

/// One recorded disagreement: its human text, and what a tool matches it by.
#[derive(Debug, Clone)]
pub struct Disagreement {
    /// What kind of difference it accounts for.
    pub concerns: Concern,
    /// Parameters of the operation it concerns, by their spec names (`param`).
    pub params: Vec<String>,
    /// Wire keys the spec does not send (`key`): what the vendor documents and the spec
    /// leaves out. Body keys are dotted (`order.accountId`); a key covers the keys below it.
    pub keys: Vec<String>,
    /// Answer fields, as wire paths inside the answer's data (`field`): `results[].id`;
    /// a field covers the fields below it.
    pub fields: Vec<String>,
    /// Routes (`route`), as `METHOD /path`.
    pub routes: Vec<String>,
    /// What it rests on: the vendor's document, its developer guides, or traffic of the
    /// live service published by integrators.
    pub source: FactSource,
    /// Where the evidence is (a guide's name, where traffic was published); set for
    /// developer guides and observed traffic.
    pub seen_in: Option<String>,
    /// What a reader is told.
    pub text: String,
    /// Where it is written.
    pub location: Location,
}

/// What a recorded disagreement rests on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FactSource {
    /// The vendor's OpenAPI document, read against the interface.
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

impl Disagreement {
    /// The things it names, in order: routes, parameters, keys, fields.
    pub fn subjects(&self) -> impl Iterator<Item = &str> {
        self.routes.iter().chain(&self.params).chain(&self.keys).chain(&self.fields).map(String::as_str)
    }
}

/// One route of the spec: an operation's canonical form or one of its aliases.
#[derive(Debug, Clone, Copy)]
pub struct RouteRef<'a> {
    /// The operation it belongs to.
    pub operation: &'a Operation,
    /// Its method.
    pub method: Method,
    /// Its path template.
    pub path: &'a PathTemplate,
    /// The alias, when this is not the canonical form.
    pub alias: Option<&'a Alias>,
}

/// An alternative form of an operation.
#[derive(Debug, Clone)]
pub struct Alias {
    /// Its method.
    pub method: Method,
    /// Its path.
    pub path: PathTemplate,
    /// Where it comes from.
    pub note: String,
    /// The other operation whose route this form is identical to, declared on purpose.
    pub same_route_as: Option<String>,
}

/// Another listing of an operation in the interface.
#[derive(Debug, Clone)]
pub struct Listing {
    /// The group it is listed under.
    pub group: String,
    /// The other operation name it is listed with, if any.
    pub name: Option<String>,
    /// Where it comes from.
    pub note: String,
}

/// A parameter of an operation.
#[derive(Debug, Clone)]
pub struct Param {
    /// The interface's exact name (snake_case).
    pub name: String,
    /// Where it travels.
    pub location: ParamLocation,
    /// Its type.
    pub ty: Type,
    /// Whether the caller must give it.
    pub required: bool,
    /// Its key on the wire; dotted keys nest in the body (`order.orderReference`).
    pub wire: String,
    /// Whether it must never be shown in `Debug`, logs or errors.
    pub secret: bool,
    /// Whether the interface or the reference brought it.
    pub origin: Origin,
    /// The reference's allowed values, if it lists them.
    pub values: Vec<String>,
    /// A constant the client always sends; such a parameter is not set by the caller.
    pub fixed: Option<String>,
    /// The largest value the service accepts (integers), checked before sending.
    pub max: Option<i64>,
    /// Whether a number or flag travels as a JSON string (`"110.00"`), as the reference
    /// wants for a few amounts.
    pub as_string: bool,
    /// How a `date_time` value is written (the service reads it as UTC, without an
    /// offset).
    pub layout: DateLayout,
    /// A format the vendor states for a text value, checked before sending.
    pub format: Option<TextFormat>,
    /// The exact length (in characters) the vendor states for a text value.
    pub length: Option<u32>,
    /// The service also takes this number or flag as a JSON string (`"1500.0"`); the
    /// client sends it as declared, and the sandbox takes both unless it is strict.
    pub accepts_text: bool,
    /// Other spellings of its values (or of its fixed value) the live service also takes;
    /// the client never sends them, and the sandbox takes them unless it is strict.
    pub also_accepts: Vec<String>,
    /// Other layouts of a `date_time` value the live service also reads (a service fact
    /// of the operation cites where); the client writes `layout`, and the sandbox takes
    /// these too unless it is strict.
    pub also_layouts: Vec<DateLayout>,
    /// The vendor's document requires it, and the live service does without it (a
    /// recorded disagreement cites where): the client lets the caller leave it out, the
    /// service-like sandbox takes a request without it, and the strict one refuses that.
    pub document_requires: bool,
    /// Doc lines.
    pub doc: Vec<String>,
}

/// How a request writes a `date_time` parameter, named in the spec by its pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum DateLayout {
    /// `YYYY-MM-DDThh:mm:ss`, the default.
    #[default]
    Seconds,
    /// `YYYY-MM-DDThh:mm`
    Minutes,
    /// `YYYY-MM-DD hh:mm:ss`
    SpaceSeconds,
    /// `YYYY-MM-DD`, a date alone
    Date,
}

impl DateLayout {
    /// Every layout, by the pattern the spec names it with.
    pub const ALL: [(&'static str, DateLayout); 4] = [
        ("YYYY-MM-DDThh:mm:ss", DateLayout::Seconds),
        ("YYYY-MM-DDThh:mm", DateLayout::Minutes),
        ("YYYY-MM-DD hh:mm:ss", DateLayout::SpaceSeconds),
        ("YYYY-MM-DD", DateLayout::Date),
    ];

    /// The pattern the spec names this layout with.
    pub fn pattern(self) -> &'static str {
        DateLayout::ALL.iter().find(|(_, layout)| *layout == self).map_or("", |(pattern, _)| pattern)
    }
}

/// An HTTP method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Method {
    /// GET
    Get,
    /// POST
    Post,
    /// PUT
    Put,
    /// DELETE
    Delete,
    /// PATCH
    Patch,
}

impl Method {
    /// The method as written on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Delete => "DELETE",
            Method::Patch => "PATCH",
        }
    }

    /// Reads `GET`, `post`, ...
    pub fn parse(text: &str) -> Option<Method> {
        match text.to_ascii_uppercase().as_str() {
            "GET" => Some(Method::Get),
            "POST" => Some(Method::Post),
            "PUT" => Some(Method::Put),
            "DELETE" => Some(Method::Delete),
            "PATCH" => Some(Method::Patch),
            _ => None,
        }
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a parameter travels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ParamLocation {
    /// A path segment.
    Path,
    /// The query string.
    Query,
    /// The JSON body.
    Body,
    /// An HTTP header.
    Header,
}

impl ParamLocation {
    /// The spec's word for it.
    pub fn as_str(self) -> &'static str {
        match self {
            ParamLocation::Path => "path",
            ParamLocation::Query => "query",
            ParamLocation::Body => "body",
            ParamLocation::Header => "header",
        }
    }
}

/// A format the vendor states for a text value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextFormat {
    /// ASCII digits only (account numbers, bank codes).
    Digits,
    /// An email address: `name@domain.tld`, no spaces.
    Email,
    /// A name: letters and spaces, no ASCII digit, punctuation or symbol.
    Name,
}

impl TextFormat {
    /// The spec's word for it.
    pub fn as_str(self) -> &'static str {
        match self {
            TextFormat::Digits => "digits",
            TextFormat::Email => "email",
            TextFormat::Name => "name",
        }
    }
}

/// Who brought an operation or parameter into the spec.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// The interface lists it.
    Interface,
    /// Only the vendor's reference documents it.
    Reference,
    /// Only the vendor's developer documentation (not its OpenAPI document) describes it.
    DeveloperDocs,
    /// Added by a user of payspec, beyond the interface: interface coverage ignores it.
    Extension,
}

impl Origin {
    /// The spec's word for it.
    pub fn as_str(self) -> &'static str {
        match self {
            Origin::Interface => "interface",
            Origin::Reference => "reference",
            Origin::DeveloperDocs => "developer_docs",
            Origin::Extension => "extension",
        }
    }
}

/// The credentials an operation sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Auth {
    /// `Authorization: Bearer` and the account header.
    BearerAndAccount,
    /// `Authorization: Bearer` only.
    Bearer,
    /// The account header only (a token issue).
    Account,
    /// Nothing.
    None,
}

impl Auth {
    /// The spec's word for it.
    pub fn as_str(self) -> &'static str {
        match self {
            Auth::BearerAndAccount => "bearer_and_account",
            Auth::Bearer => "bearer",
            Auth::Account => "account",
            Auth::None => "none",
        }
    }

    /// Whether it sends the account header (`service.account_header`).
    pub fn sends_account(self) -> bool {
        matches!(self, Auth::BearerAndAccount | Auth::Account)
    }
}

/// What an operation does to the world.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// Changes nothing.
    Read,
    /// Changes state.
    Write,
    /// Moves money.
    Money,
}

impl Effect {
    /// The spec's word for it.
    pub fn as_str(self) -> &'static str {
        match self {
            Effect::Read => "read",
            Effect::Write => "write",
            Effect::Money => "money",
        }
    }
}

/// How a list is paged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageStyle {
    /// `limit` and `cursor` in, `data.cursor` out.
    Cursor,
    /// `page` and `limit` in, `data.nextPage` out.
    Page,
    /// `page` and `page_size` in, `data.hasMore` out.
    PageSize,
}

impl PageStyle {
    /// The spec's word for it.
    pub fn as_str(self) -> &'static str {
        match self {
            PageStyle::Cursor => "cursor",
            PageStyle::Page => "page",
            PageStyle::PageSize => "page_size",
        }
    }
}

/// The type of a parameter or field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Type {
    /// Text.
    String,
    /// A whole number.
    Integer,
    /// true or false.
    Boolean,
    /// An exact amount.
    Decimal,
    /// An ISO-8601 instant or date, as text.
    DateTime,
    /// Any JSON value.
    Json,
    /// A list of strings.
    StringList,
    /// A typed identifier declared under `identifiers`.
    Identifier(String),
    /// A shape declared under `shapes` (answers only).
    Shape(String),
}

impl Type {
    /// The built-in type names.
    pub const BUILTIN: [&'static str; 7] =
        ["string", "integer", "boolean", "decimal", "date_time", "json", "string_list"];

    /// Reads a built-in type name.
    pub fn builtin(name: &str) -> Option<Type> {
        Some(match name {
            "string" => Type::String,
            "integer" => Type::Integer,
            "boolean" => Type::Boolean,
            "decimal" => Type::Decimal,
            "date_time" => Type::DateTime,
            "json" => Type::Json,
            "string_list" => Type::StringList,
            _ => return None,
        })
    }

    /// The spec's word for it.
    pub fn name(&self) -> &str {
        match self {
            Type::String => "string",
            Type::Integer => "integer",
            Type::Boolean => "boolean",
            Type::Decimal => "decimal",
            Type::DateTime => "date_time",
            Type::Json => "json",
            Type::StringList => "string_list",
            Type::Identifier(name) | Type::Shape(name) => name,
        }
    }
}

/// A path such as `/v2/transfers/bank/{subAccountId}`, split into segments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathTemplate {
    text: String,
    segments: Vec<Segment>,
}

/// One segment of a path template.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Segment {
    /// Fixed text.
    Literal(String),
    /// A `{variable}`.
    Variable(String),
}

impl PathTemplate {
    /// Parses a template, or says what is wrong with it.
    pub fn parse(text: &str) -> Result<PathTemplate, String> {
        let Some(rest) = text.strip_prefix('/') else {
            return Err("a path must start with `/`".into());
        };
        if text.contains(['?', '#', ' ']) {
            return Err(
                "a path holds no query, fragment or space; put query values in `in: query` params".into()
            );
        }
        let mut segments = Vec::new();
        for part in rest.split('/') {
            if part.is_empty() {
                return Err("a path has no empty segment (`//` or a trailing `/`)".into());
            }
            if let Some(inner) = part.strip_prefix('{') {
                let Some(name) = inner.strip_suffix('}') else {
                    return Err(format!("segment `{part}` opens `{{` without closing it"));
                };
                if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                    return Err(format!("`{{{name}}}` is not a variable name: use letters, digits and `_`"));
                }
                if segments.contains(&Segment::Variable(name.to_owned())) {
                    return Err(format!("variable `{{{name}}}` appears twice"));
                }
                segments.push(Segment::Variable(name.to_owned()));
            } else if part.contains(['{', '}']) {
                return Err(format!(
                    "segment `{part}` mixes text and a variable; a variable takes a whole segment"
                ));
            } else {
                segments.push(Segment::Literal(part.to_owned()));
            }
        }
        Ok(PathTemplate { text: text.to_owned(), segments })
    }

    /// A path that failed to parse, kept as one literal so that loading can go on and
    /// report the other errors of the file.
    pub(crate) fn malformed(text: &str) -> PathTemplate {
        PathTemplate { text: text.to_owned(), segments: vec![Segment::Literal(text.to_owned())] }
    }

    /// The template as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Its segments.
    pub fn segments(&self) -> &[Segment] {
        &self.segments
    }

    /// Its variable names, in order.
    pub fn variables(&self) -> impl Iterator<Item = &str> {
        self.segments.iter().filter_map(|s| match s {
            Segment::Variable(name) => Some(name.as_str()),
            Segment::Literal(_) => None,
        })
    }

    /// The template with variable names erased: two routes with equal shapes receive the
    /// same requests.
    pub fn shape(&self) -> String {
        PathTemplate::shape_of(&self.text)
    }

    /// The shape of any path text, parsed or not (a vendor document's path may not be a
    /// template this loader takes): each `{variable}` written `{}`, so `/a/{x}` and `/a/{y}`
    /// are one route. What the loader, the audit, the OpenAPI reader and `find_route`
    /// compare routes by.
    pub fn shape_of(text: &str) -> String {
        let mut shape = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(open) = rest.find('{') {
            let Some(close) = rest[open..].find('}') else { break };
            shape.push_str(&rest[..open]);
            shape.push_str("{}");
            rest = &rest[open + close + 1..];
        }
        shape.push_str(rest);
        shape
    }

    /// The variable names of any path text, in order (see [`PathTemplate::shape_of`]).
    pub fn variables_of(text: &str) -> Vec<&str> {
        let mut names = Vec::new();
        let mut rest = text;
        while let Some(open) = rest.find('{') {
            let Some(close) = rest[open..].find('}') else { break };
            names.push(&rest[open + 1..open + close]);
            rest = &rest[open + close + 1..];
        }
        names
    }

    /// The value of each variable in a request's `path` (as sent: not decoded), when the
    /// path has this template's shape; what a server routes by.
    pub fn match_path<'p>(&self, path: &'p str) -> Option<Vec<(&str, &'p str)>> {
        let mut parts = path.strip_prefix('/')?.split('/');
        let mut values = Vec::new();
        for segment in &self.segments {
            let part = parts.next()?;
            match segment {
                Segment::Literal(text) if text == part => {}
                Segment::Literal(_) => return None,
                Segment::Variable(name) => values.push((name.as_str(), part)),
            }
        }
        if parts.next().is_some() { None } else { Some(values) }
    }

    /// How many of its segments are fixed text: of two templates a path fits, the one
    /// with more is meant (`/v1/accounts/balance` before `/v1/accounts/{id}`).
    pub fn literals(&self) -> usize {
        self.segments.iter().filter(|s| matches!(s, Segment::Literal(_))).count()
    }
}

impl fmt::Display for PathTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::PathTemplate;

    #[test]
    fn one_template_routes_shapes_and_names_variables() -> Result<(), String> {
        let template = PathTemplate::parse("/v1/accounts/{accountId}/balance")?;
        assert_eq!(template.shape(), "/v1/accounts/{}/balance");
        assert_eq!(PathTemplate::shape_of("/v1/accounts/{id}/balance?x={y}"), "/v1/accounts/{}/balance?x={}");
        assert_eq!(PathTemplate::variables_of("/a/{x}/b/{y}"), vec!["x", "y"]);
        assert_eq!(template.match_path("/v1/accounts/a%2Fb/balance"), Some(vec![("accountId", "a%2Fb")]));
        assert_eq!(template.match_path("/v1/accounts/x/balance/more"), None);
        assert_eq!(template.match_path("/v1/accounts/x"), None);
        assert_eq!(template.match_path("v1/accounts/x/balance"), None);
        assert_eq!(template.literals(), 3);
        Ok(())
    }
}
