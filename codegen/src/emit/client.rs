//! The client: one accessor per group, one method per operation.

use super::code::Code;
use super::names::{Gates, Names, data_type, field_ident, page_item, request_type};
use super::requests::{operation_doc, settable};
use crate::model::{Operation, Param, Spec};
use heck::{ToShoutySnakeCase, ToSnakeCase, ToUpperCamelCase};

/// One accessor method per group, `fn <group>(&self) -> <handle>`, where `handle` makes
/// the handle's type and its construction from the group's type name.
pub(super) fn group_accessors(
    out: &mut Code,
    spec: &Spec,
    gates: &Gates,
    handle: impl Fn(&str) -> (String, String),
) {
    for group in &spec.groups {
        let method = field_ident(&group.key.to_snake_case());
        let (handle_type, construct) = handle(&group.key.to_upper_camel_case());
        out.doc_line("        ", &format!("{}: {}", group.title, group.doc.join(" ")));
        if let Some(attr) = gates.group(&group.key) {
            writeln!(out, "        {attr}");
        }
        writeln!(out, "        pub fn {method}(&self) -> {handle_type} {{ {construct} }}");
    }
}

pub(super) fn client_items(
    out: &mut Code,
    spec: &Spec,
    names: &Names,
    examples: Option<&str>,
    gates: &Gates,
) {
    out.push("/// The base URLs the spec names.\npub mod environments {\n");
    for env in &spec.environments {
        let url = super::code::Lit(&env.url);
        out.doc_line("    ", &format!("`{}`", env.url));
        writeln!(out, "    pub const {}: &str = {url};", env.name.to_shouty_snake_case());
    }
    out.push("}\n");
    environment_enum(out, spec);
    if let Some(code) = spec.answers.reading.success_codes.first() {
        out.doc_line("", "The code of a successful answer, unless an operation says otherwise.");
        writeln!(out, "pub const SUCCESS_CODE: &str = {};", super::code::Lit(code));
    }
    if !spec.codes.is_empty() {
        service_code(out, &spec.codes);
    }
    out.push(
        "/// The `User-Agent` the client sends unless its builder's `user_agent` sets another: the
/// name and version of the crate the client is generated in.
pub const DEFAULT_USER_AGENT: &str = concat!(env!(\"CARGO_PKG_NAME\"), \"/\", env!(\"CARGO_PKG_VERSION\"));
pub use client::Client;
/// The client type.
pub mod client {
    use ::payspec_runtime::__private as rt;
    // Unused when a crate compiles no group (see `Gates`).
    #[allow(unused_imports)]
    use super::groups;
    use super::routes;
",
    );
    out.doc_line("    ", &format!("The client of the {}: one accessor per resource group.", spec.title));
    out.push(
        "    ///
    /// Build it with [`Client::builder`]; every call goes through the hand-written runtime,
    /// which obtains and refreshes tokens, retries only when it is safe, and decodes answers.
    #[derive(Clone, Debug)]
    pub struct Client { session: rt::Session }
    impl Client {
        /// A builder that already knows the spec's token routes, its default environment
        /// and this crate's `User-Agent`; `build()` returns this client.
        pub fn builder() -> rt::ClientBuilder<Client> {
            rt::ClientBuilder::new(&routes::SERVICE)
                .environment(super::Environment::DEFAULT)
                .user_agent(super::DEFAULT_USER_AGENT)
        }
        /// A client configured from the environment alone: where it sends
        /// (`PAYSPEC_BASE_URL`, or `PAYSPEC_ENVIRONMENT` naming an environment of the spec;
        /// the default environment without either), its credentials (`PAYSPEC_CLIENT_ID`,
        /// `PAYSPEC_CLIENT_SECRET`, `PAYSPEC_ACCOUNT_ID`) and its timeouts
        /// (`PAYSPEC_TIMEOUT`, `PAYSPEC_CALL_TIMEOUT`: `30s`, `500ms`, or seconds). The
        /// error names every variable that is missing or wrong.
        /// [`ClientBuilder::from_env`](rt::ClientBuilder::from_env) does the same on a
        /// builder, for what the environment does not say.
        pub fn from_env() -> Result<Client, rt::Error> {
            Client::builder().from_env()?.build()
        }
        /// The session underneath: `send_with` for per-call settings, `pages_with`,
        /// `revoke`.
        pub fn session(&self) -> &rt::Session { &self.session }
",
    );
    group_accessors(out, spec, gates, |ty| {
        (format!("groups::{ty}<'_>"), format!("groups::{ty} {{ session: &self.session, options: None }}"))
    });
    out.push(
        "    }
    impl From<rt::Session> for Client {
        fn from(session: rt::Session) -> Self { Client { session } }
    }
}
/// One handle per resource group, each with one method per operation.
pub mod groups {
    #[allow(unused_imports)]
    use ::payspec_runtime::__private as rt;
    #[allow(unused_imports)]
    use super::requests;
",
    );
    for group in &spec.groups {
        let mut doc = vec![format!("The {} operations.", group.title)];
        if !group.doc.is_empty() {
            doc.push(String::new());
            doc.extend(group.doc.iter().cloned());
        }
        if let Some(krate) = examples {
            doc.extend(super::examples::group_example(spec, group, names, krate));
        }
        out.gated(gates.group(&group.key).as_deref(), "    ", |out| {
            out.doc("    ", &doc);
            write!(
                out,
                "    #[derive(Clone, Copy, Debug)]
    pub struct {ty}<'a> {{
        pub(crate) session: &'a rt::Session,
        pub(crate) options: Option<&'a rt::CallOptions>,
    }}
    // Each method returns a block rather than being an `async fn`, whose future would
    // hold its request twice.
    #[allow(clippy::manual_async_fn)]
    impl<'a> {ty}<'a> {{
        /// The same operations, each call made with `options` (a deadline, a retry
        /// policy, a page limit for listings) instead of the client's settings.
        pub fn with_options(self, options: &'a rt::CallOptions) -> Self {{
            Self {{ session: self.session, options: Some(options) }}
        }}
",
                ty = group.key.to_upper_camel_case()
            );
            for op in spec.operations.iter().filter(|op| op.group == group.key) {
                client_methods(out, spec, op, names);
                super::settle::settle_methods(out, spec, op, names, gates);
            }
            out.push("    }\n");
            for op in spec.operations.iter().filter(|op| op.group == group.key) {
                super::settle::payment_impl(out, spec, op, gates);
            }
        });
    }
    out.push("}\n");
}

/// `Environment`: one variant per environment of the spec, and `Custom` for any other base
/// URL; what the client's builder takes, starting at the spec's default.
fn environment_enum(out: &mut Code, spec: &Spec) {
    out.push(
        "/// Where the client sends its requests: one of the environments the spec names, or any
/// other base URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Environment {
",
    );
    for env in &spec.environments {
        let default = if env.name == spec.default_environment { " (the default)" } else { "" };
        out.doc_line("    ", &format!("`{}`{default}", env.url));
        writeln!(out, "    {},", env.name.to_upper_camel_case());
    }
    out.push(
        "    /// Any other base URL: a local test server, the sandbox of `payspec-sandbox`, a proxy.
    Custom(String),
}
impl Environment {
",
    );
    out.doc_line(
        "    ",
        &format!("The environment a client uses unless told otherwise: `{}`.", spec.default_environment),
    );
    writeln!(
        out,
        "    pub const DEFAULT: Environment = Environment::{};",
        spec.default_environment.to_upper_camel_case()
    );
    out.push(
        "    /// Any other base URL, from text or a `String`: `Environment::custom(\"http://127.0.0.1:8080\")`.
    pub fn custom(url: impl Into<String>) -> Environment {
        Environment::Custom(url.into())
    }
    /// Its base URL, without a trailing slash.
    pub fn base_url(&self) -> &str {
        match self {
",
    );
    for env in &spec.environments {
        writeln!(
            out,
            "            Environment::{} => environments::{},",
            env.name.to_upper_camel_case(),
            env.name.to_shouty_snake_case()
        );
    }
    out.push(
        "            Environment::Custom(url) => url.trim_end_matches('/'),
        }
    }
}
impl From<Environment> for ::payspec_runtime::__private::BaseUrl {
    fn from(environment: Environment) -> Self {
        match environment {
            Environment::Custom(url) => url.into(),
            named => named.base_url().into(),
        }
    }
}
",
    );
}

fn client_methods(out: &mut Code, spec: &Spec, op: &Operation, names: &Names) {
    let method = field_ident(&op.name);
    let ty = request_type(op);
    let data = data_type(op, "super::types");
    let mut doc = operation_doc(op);
    let params: Vec<&Param> = settable(op).collect();
    if !params.is_empty() || !op.one_of.is_empty() {
        doc.push(String::new());
        doc.push("# Parameters".to_owned());
        doc.push(String::new());
        for param in params {
            let need = if param.required { "required" } else { "optional" };
            let secret = if param.secret { ", secret" } else { "" };
            let summary = param.doc.first().map(|d| format!(": {d}")).unwrap_or_default();
            doc.push(format!(
                "- `{}` ({} `{}`, {}, {need}{secret}){summary}",
                param.name,
                param.location.as_str(),
                param.wire,
                param.ty.name()
            ));
        }
    }
    for set in &op.one_of {
        let keys: Vec<String> = set
            .params
            .iter()
            .filter_map(|name| op.param(name))
            .map(|p| format!("`{}` (query `{}`)", p.name, p.wire))
            .collect();
        doc.push(format!("- `{}` (required): exactly one of {}", set.name, keys.join(", ")));
    }
    out.doc("        ", &doc);
    write!(
        out,
        "        pub fn {method}(
            self,
            request: requests::{ty},
        ) -> impl rt::Future<Output = Result<rt::Outcome<{data}>, rt::Error>> + 'a {{
            self.session.send_owned(request, rt::CallOptions::or_default(self.options))
        }}
"
    );
    if let Some(items) = spec.page_items(op) {
        let (item, _) = page_item(items, names, "super::types");
        let name = &op.name;
        out.doc(
            "        ",
            &[
                format!("Every page of [`{name}`](Self::{name}), in order."),
                String::new(),
                "Its page limit and other settings come from [`with_options`](Self::with_options)."
                    .to_owned(),
            ],
        );
        write!(
            out,
            "        pub fn {name}_pages(self, request: requests::{ty}) -> rt::Listing<'a, {data}> {{
            self.session.pages_with(request, rt::CallOptions::or_default(self.options))
        }}
"
        );
        out.doc(
            "        ",
            &[
                format!("Every record of [`{name}`](Self::{name}), across its pages, in order:"),
                "`while let Some(record) = listing.next().await`, or `listing.all().await`.".to_owned(),
                String::new(),
                "Its page limit and other settings come from [`with_options`](Self::with_options)."
                    .to_owned(),
            ],
        );
        write!(
            out,
            "        pub fn {name}_items(self, request: requests::{ty}) -> rt::Listing<'a, {item}> {{
            self.session.items_with(request, rt::CallOptions::or_default(self.options))
        }}
"
        );
    }
}

/// `ServiceCode`: one variant per code the spec documents, `Other` for the rest.
fn service_code(out: &mut Code, codes: &[crate::model::ServiceCode]) {
    use super::code::Lit;
    out.push(
        "/// An envelope code of the service: the documented ones by name, any other kept as sent.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ServiceCode {
",
    );
    for code in codes {
        out.doc_line("    ", &format!("`{}`: {}", code.code, code.doc));
        writeln!(out, "    {},", code.name.to_upper_camel_case());
    }
    out.push(
        "    /// Any other code, as the service sent it.
    Other(String),
}
impl ServiceCode {
    /// The code as it travels.
    pub fn as_str(&self) -> &str {
        match self {
",
    );
    for code in codes {
        writeln!(out, "            ServiceCode::{} => {},", code.name.to_upper_camel_case(), Lit(&code.code));
    }
    out.push(
        "            ServiceCode::Other(code) => code,
        }
    }
    /// Whether the service documents that the same request may be sent again (a
    /// money-moving request only with the same reference).
    pub fn is_retryable(&self) -> bool {
",
    );
    let retryable: Vec<String> = codes
        .iter()
        .filter(|c| c.retry)
        .map(|c| format!("ServiceCode::{}", c.name.to_upper_camel_case()))
        .collect();
    if retryable.is_empty() {
        out.push(
            "        false
",
        );
    } else {
        writeln!(out, "        matches!(self, {})", retryable.join(" | "));
    }
    out.push(
        "    }
    /// The envelope code behind `error`, if it carries one.
    pub fn of(error: &::payspec_runtime::__private::Error) -> Option<ServiceCode> {
        error.code().map(ServiceCode::from)
    }
}
impl From<&str> for ServiceCode {
    fn from(code: &str) -> Self {
        match code.trim() {
",
    );
    for code in codes {
        writeln!(out, "            {} => ServiceCode::{},", Lit(&code.code), code.name.to_upper_camel_case());
    }
    out.push(
        "            other => ServiceCode::Other(other.to_owned()),
        }
    }
}
impl ::core::fmt::Display for ServiceCode {
    fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
        f.write_str(self.as_str())
    }
}
",
    );
}
