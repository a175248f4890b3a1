//! The validated spec: what every back end (audit, emitter, OpenAPI, sandbox) sees.
//!
//! Everything here has passed validation: a parameter's wire key is resolved, its type is
//! known, every path variable has its parameter, and no `Option` stands for something
//! validation already required. Its rooms follow the loader's sections (`load/validate/`):
//! `service`, `webhooks`, `operations` (with each operation's `settle` in `settle`),
//! `routes` (path templates) and `types` (identifiers, shapes and field types); `location`
//! says where an item is declared. The words the spec shares with the runtime and the
//! sandbox (methods, credentials, effects, answer readings, envelopes, page styles, date
//! layouts, text formats, final states, webhook schemes) are `payspec-vocabulary`'s, in
//! their owned form, re-exported here.

use std::sync::Arc;

mod location;
mod operations;
mod routes;
mod service;
mod settle;
mod types;
mod webhooks;

pub use payspec_vocabulary::{
    Auth, Awaiting, BodyEncoding, DateLayout, Effect, EnvelopeKeys, EnvelopeKind, ErrorKeys, FinalState,
    HmacDigest, Method, Owned, PageStyle, ROLES, Role, SignatureEncoding, SignedOver, SignedValue, SuccessBy,
    TextFormat, WebhookScheme,
};

pub use self::location::Location;
pub use self::operations::{
    Alias, AlsoAuth, AnswerType, Balance, Concern, Disagreement, Group, IdempotencyHeader, Listing, OneOf,
    Operation, Origin, Param, ParamLocation, RouteRef, TOKEN_GRANT_FIELDS, TokenRole,
};
pub use self::routes::{PathTemplate, Segment};
pub use self::service::{
    AlsoPath, Answers, Credential, Environment, Evidence, FactSource, PageKeys, ReadingSource, ServiceCode,
    ServiceRule, TakenRule, TokenOperations, WireCase,
};
pub use self::settle::{KeySource, Lookup, Settle};
pub use self::types::{Field, Identifier, RESERVED_TYPE_NAMES, Shape, Type};
pub use self::webhooks::{EventOutcome, WebhookPayload, WebhookSettles, Webhooks};

/// Where a page holds a listing's records.
#[derive(Debug, Clone, Copy)]
pub enum PageItems<'s> {
    /// The one list field of the page's shape.
    Field(&'s Shape, &'s Field),
    /// The page's data, which is the list of records of this type.
    Data(&'s Type),
}

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
    /// How a name without a `wire` key of its own is spelled on the wire
    /// (`service.wire_case`).
    pub wire_case: WireCase,
    /// The credentials operations send as they are, each in a header of its own
    /// (`service.credentials`); an operation's `Auth::Key` names one by its place here.
    pub credentials: Vec<Credential>,
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
    /// Rules of the live service beyond its document, over every route or every value of a
    /// kind (`service.also_takes`): never sent by the client, taken by the service-like
    /// sandbox, refused by the strict one.
    pub also_takes: Vec<TakenRule>,
    /// The keys of the answer envelope (`service.envelope`).
    pub envelope: Arc<EnvelopeKeys<Owned>>,
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

    /// Where a listing's answer holds its records: the one list field of its answer shape
    /// (validation makes sure there is exactly one), or its data itself, when that is the
    /// list.
    pub fn page_items<'s>(&'s self, op: &'s Operation) -> Option<PageItems<'s>> {
        op.pagination.as_ref()?;
        match op.response.as_ref()? {
            AnswerType { ty, list: true } => Some(PageItems::Data(ty)),
            AnswerType { ty: Type::Shape(name), list: false } => {
                let shape = self.shape(name)?;
                let mut lists = shape.fields.iter().filter(|f| f.list);
                match (lists.next(), lists.next()) {
                    (Some(field), None) => Some(PageItems::Field(shape, field)),
                    _ => None,
                }
            }
            AnswerType { list: false, .. } => None,
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
