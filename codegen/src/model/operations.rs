//! The `operations` section: each operation with its route, parameters, credentials and
//! effect, its other forms and listings, and where the interface and the vendor disagree
//! about it; and the groups it is listed under.

use payspec_vocabulary::{Auth, BodyEncoding, DateLayout, Effect, Method, Owned, PageStyle, TextFormat};

use super::location::Location;
use super::routes::PathTemplate;
use super::service::{Answers, FactSource, TakenRule};
use super::settle::Settle;
use super::types::Type;

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
    /// How its body parameters travel: JSON or a form.
    pub body_encoding: BodyEncoding,
    /// The sandbox's stateful behaviour it plays, when its spec names one (a word of
    /// `payspec_vocabulary::ROLES`).
    pub role: Option<String>,
    /// The name of the parameter whose value makes a retry safe.
    pub idempotency: Option<String>,
    /// A header carrying that value which the service deduplicates on.
    pub idempotency_header: Option<IdempotencyHeader>,
    /// How its answers are read (the service's defaults, with its own overrides).
    pub answers: Answers,
    /// How its answers are paged.
    pub pagination: Option<PageStyle<Owned>>,
    /// How its final state is read, for a money operation that may answer pending.
    pub settle: Option<Settle>,
    /// This read answers the balance the money operations move (`balance`), if the spec
    /// says: what the sandbox keeps by the payments that settle.
    pub balance: Option<Balance>,
    /// Other ways the live service takes this operation authenticated (`also_auth`): taken
    /// by the service-like sandbox, never sent by the client (it sends `auth`).
    pub also_auth: Vec<AlsoAuth>,
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

/// Another way the live service takes an operation authenticated, with where it is shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AlsoAuth {
    /// How.
    pub auth: Auth,
    /// What it rests on: a developer guide or published traffic.
    pub source: FactSource,
    /// Where it is shown.
    pub seen_in: String,
}

/// A read that answers the balance (`balance`): the key of its answer (of each record, when
/// the answer is a list) that holds it, and how many of that key's units make one of the
/// currency (100 for kobo or cents; 1 when the balance is written in units).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Balance {
    /// The wire key of the balance.
    pub field: String,
    /// The key's units per unit of the currency.
    pub subunits: u32,
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
pub const TOKEN_GRANT_FIELDS: [&str; 4] = ["access_token", "refresh_token", "expires_at", "expires_in"];

impl Operation {
    /// Whether `param` is the idempotency reference carried as the idempotency header
    /// itself (`in: header`, the header's `wire`): sent once, as that header.
    pub fn is_idempotency_header(&self, param: &Param) -> bool {
        self.idempotency.as_deref() == Some(param.name.as_str())
            && param.location == ParamLocation::Header
            && self.idempotency_header.as_ref().is_some_and(|h| h.wire.eq_ignore_ascii_case(&param.wire))
    }

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

impl Disagreement {
    /// The things it names, in order: routes, parameters, keys, fields.
    pub fn subjects(&self) -> impl Iterator<Item = &str> {
        self.routes.iter().chain(&self.params).chain(&self.keys).chain(&self.fields).map(String::as_str)
    }
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
    /// How a `date_time` value is written, in UTC (no offset but an instant's `Z`).
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

impl Param {
    /// The layouts beyond its own the live service reads this `date_time` in: its
    /// `also_layouts`, then those a rule of the service (`service.also_takes`) adds for its
    /// layout. The client never writes them; a service-like sandbox takes them.
    pub fn layouts_taken<'a>(&'a self, rules: &'a [TakenRule]) -> impl Iterator<Item = DateLayout> + 'a {
        let by_rule = rules.iter().filter_map(|taken| taken.rule.also_layout(self.layout));
        self.also_layouts.iter().copied().chain(by_rule)
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

/// Who brought an operation or parameter into the spec.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Origin {
    /// The interface lists it (what no `origin` says).
    #[default]
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
