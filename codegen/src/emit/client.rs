//! The client: one accessor per group, one method per operation.

use super::code::Code;
use super::names::{Gates, Names, data_type, field_ident, page_item, request_type};
use super::requests::{operation_doc, settable};
use crate::model::{KeySource, Lookup, Operation, Param, Settle, Spec, Type};
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
    use ::payspec_runtime as rt;
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
    use ::payspec_runtime as rt;
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
                settle_methods(out, spec, op, names, gates);
            }
            out.push("    }\n");
            for op in spec.operations.iter().filter(|op| op.group == group.key) {
                payment_impl(out, spec, op, gates);
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
impl From<Environment> for ::payspec_runtime::BaseUrl {
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
    pub fn of(error: &::payspec_runtime::Error) -> Option<ServiceCode> {
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

/// `settle_<op>` (from a call's request and outcome) and `settle_<op>_by_reference` (from
/// the caller's references alone), for a money operation the spec says how to settle.
fn settle_methods(out: &mut Code, spec: &Spec, op: &Operation, names: &Names, gates: &Gates) {
    let Some(settle) = &op.settle else { return };
    let lookups: Vec<(&Lookup, &Operation)> =
        settle.lookups.iter().filter_map(|l| Some((l, spec.operation(&l.operation)?))).collect();
    let Some((_, first)) = lookups.first() else { return };
    let name = &op.name;
    let ty = request_type(op);
    let data = data_type(op, "super::types");
    let answer = data_type(first, "super::types");
    let constant = super::route_const(op);
    // The lookups' groups, when they are not this one's: the method needs them compiled.
    let others: std::collections::BTreeSet<&String> =
        lookups.iter().map(|(_, read)| &read.group).filter(|g| **g != op.group).collect();
    let gate = gates.all(others.iter().copied());
    let mut reads: Vec<String> = Vec::new();
    for (_, read) in &lookups {
        let link = read_link(read);
        if !reads.contains(&link) {
            reads.push(link);
        }
    }
    let mut doc = vec![
        format!(
            "Follows a [`{name}`](Self::{name}) to its final state, from its request and the outcome it answered."
        ),
        String::new(),
        format!(
            "It asks {} (the first whose key the answer or the request holds), never `{name}` again;",
            reads.join(" or ")
        ),
    ];
    doc.extend(settle_doc(settle));
    doc.extend(gate_doc(&others));
    out.doc("        ", &doc);
    if let Some(gate) = &gate {
        writeln!(out, "        {gate}");
    }
    write!(
        out,
        "        pub fn settle_{name}(
            self,
            request: &requests::{ty},
            outcome: &rt::Outcome<{data}>,
            options: rt::SettleOptions,
        ) -> impl rt::Future<Output = Result<rt::Settled<{answer}>, rt::Error>> + 'a {{
            let start = rt::SettleStart::of(&super::routes::settle::{constant}, outcome, super::routes::{constant}.answers.status_field);
"
    );
    // Each distinct source once, as `Option<String>`.
    let mut sources: Vec<&KeySource> = Vec::new();
    for (lookup, _) in &lookups {
        for (_, source) in &lookup.params {
            if !sources.contains(&source) {
                sources.push(source);
            }
        }
    }
    if sources.iter().any(|source| matches!(source, KeySource::Answer(_))) {
        out.push("            let data = outcome.envelope().data.as_ref();\n");
    }
    if !sources.iter().any(|source| matches!(source, KeySource::Request(_))) {
        // The same arguments as every settle method, though this one's lookups take only
        // answer values.
        out.push("            let _ = request;\n");
    }
    for (i, source) in sources.iter().enumerate() {
        writeln!(out, "            let key_{i} = {};", source_text(op, source));
    }
    let all_keys = (0..sources.len()).map(|i| format!("&key_{i}")).collect::<Vec<_>>().join(", ");
    writeln!(
        out,
        "            let keys: Vec<String> = [{all_keys}].into_iter().flatten().cloned().collect();"
    );
    for (n, (lookup, read)) in lookups.iter().enumerate() {
        let bound: Vec<usize> = lookup
            .params
            .iter()
            .map(|(_, source)| sources.iter().position(|s| *s == source).unwrap_or_default())
            .collect();
        let pattern = bound.iter().map(|i| format!("Some(k_{i})")).collect::<Vec<_>>().join(", ");
        let values = bound.iter().map(|i| format!("&key_{i}")).collect::<Vec<_>>().join(", ");
        let fields = lookup_fields(read, lookup, &|position| format!("k_{}.clone()", bound[position]));
        writeln!(
            out,
            "            let lookup_{n} = match ({values},) {{ ({pattern},) => {}, _ => None }};",
            made(numeric(read, lookup), &format!("requests::{} {{ {fields} }}", request_type(read))),
        );
    }
    out.push("            async move {\n");
    for n in 0..lookups.len() {
        writeln!(
            out,
            "                if let Some(lookup) = lookup_{n} {{
                    return self.session.settle(&super::routes::settle::{constant}, &lookup, keys, start, options).await;
                }}"
        );
    }
    let needs = lookups
        .iter()
        .flat_map(|(l, _)| l.params.iter().map(|(_, source)| source_name(source)))
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect::<Vec<_>>()
        .join(", ");
    writeln!(
        out,
        "                Err(rt::Error::invalid({}))
            }}
        }}",
        super::code::Lit(&format!(
            "the answer and the request hold none of the keys `{name}` is looked up by ({needs}), so its state cannot be asked"
        )),
    );

    // From the caller's references alone.
    let Some(ByReference { read, lookup, args, groups: lookup_group }) = by_reference(spec, op) else {
        return;
    };
    let mut doc = vec![
        format!(
            "Follows a [`{name}`](Self::{name}) to its final state from the references it was sent with alone (after a restart, with no answer): it asks {} at once, then as [`settle_{name}`](Self::settle_{name}) does.",
            read_link(read)
        ),
        String::new(),
        format!(
            "It never sends `{name}`: a payment the service does not know stays pending (with the service's answer) until the deadline;"
        ),
    ];
    doc.extend(settle_doc(settle));
    doc.extend(gate_doc(&lookup_group));
    out.doc("        ", &doc);
    if let Some(gate) = gates.all(lookup_group.iter().copied()) {
        writeln!(out, "        {gate}");
    }
    let params = reference_params(&args, names);
    writeln!(
        out,
        "        pub fn settle_{name}_by_reference(
            self,
            {params},
            options: rt::SettleOptions,
        ) -> impl rt::Future<Output = Result<rt::Settled<{answer}>, rt::Error>> + 'a {{"
    );
    for p in &args {
        let id = field_ident(&p.name);
        writeln!(
            out,
            "            let {id} = {{ let value: {} = {id}.into(); value.to_string() }};",
            names.value_type(p)
        );
    }
    let keys =
        args.iter().map(|p| format!("{}.clone()", field_ident(&p.name))).collect::<Vec<_>>().join(", ");
    writeln!(out, "            let keys = vec![{keys}];");
    let fields = lookup_fields(read, lookup, &|position| {
        let KeySource::Request(from) = &lookup.params[position].1 else { return String::new() };
        format!("{}.clone()", field_ident(from))
    });
    let literal = format!("requests::{} {{ {fields} }}", request_type(read));
    if numeric(read, lookup) {
        // The numbers were written from whole numbers just above: read back, they are.
        writeln!(
            out,
            "            let lookup = {};
            async move {{
                let Some(lookup) = lookup else {{
                    return Err(rt::Error::invalid({unreadable}));
                }};
                self.session.settle(&super::routes::settle::{constant}, &lookup, keys, rt::SettleStart::Now, options).await
            }}
        }}",
            made(true, &literal),
            unreadable = super::code::Lit(&format!("a reference `{}` is looked up by is not a whole number", read.name)),
        );
    } else {
        writeln!(
            out,
            "            let lookup = {literal};
            async move {{
                self.session.settle(&super::routes::settle::{constant}, &lookup, keys, rt::SettleStart::Now, options).await
            }}
        }}"
        );
    }
}

/// `rt::payout::Payment` for the request of a money operation that settles by one
/// reference the request carries, so that a `PayoutBatch` sends, follows and resumes it.
fn payment_impl(out: &mut Code, spec: &Spec, op: &Operation, gates: &Gates) {
    let Some(ByReference { args, groups, .. }) = by_reference(spec, op) else { return };
    let [reference] = args.as_slice() else { return };
    if !reference.required {
        return;
    }
    let Some(first) =
        op.settle.as_ref().and_then(|s| s.lookups.first()).and_then(|l| spec.operation(&l.operation))
    else {
        return;
    };
    let name = &op.name;
    let ty = request_type(op);
    let answer = data_type(first, "super::types");
    let group = field_ident(&op.group.to_snake_case());
    let field = field_ident(&reference.name);
    out.doc_line(
        "    ",
        &format!("A `{name}` as an item of a [`PayoutBatch`](rt::payout::PayoutBatch): sent once, followed to its final state, resumed by its `{}`.", reference.name),
    );
    if let Some(gate) = gates.all(groups.iter().copied()) {
        writeln!(out, "    {gate}");
    }
    write!(
        out,
        "    impl rt::payout::Payment<super::Client> for requests::{ty} {{
        type Answer = {answer};
        fn reference(&self) -> String {{ self.{field}.to_string() }}
        fn pay<'a>(&'a self, client: &'a super::Client, options: rt::SettleOptions) -> rt::futures::future::BoxFuture<'a, Result<rt::Settled<Self::Answer>, rt::payout::PayFailure>> {{
            Box::pin(async move {{
                let outcome = client.{group}().{method}(self.clone()).await.map_err(rt::payout::PayFailure::Send)?;
                client.{group}().settle_{name}(self, &outcome, options).await.map_err(rt::payout::PayFailure::Settle)
            }})
        }}
        fn settle_by_reference<'a>(client: &'a super::Client, reference: &'a str, options: rt::SettleOptions) -> rt::futures::future::BoxFuture<'a, Result<rt::Settled<Self::Answer>, rt::Error>> {{
            Box::pin(client.{group}().settle_{name}_by_reference(reference, options))
        }}
    }}
",
        // The operation's own method may be a keyword (`r#type`); `settle_type` is not.
        method = field_ident(name),
    );
}

/// The lookup `settle_<op>_by_reference` asks: the first whose values all come from the
/// request; the request parameters it takes as arguments, and the other groups it needs.
pub(super) struct ByReference<'s> {
    pub(super) read: &'s Operation,
    pub(super) lookup: &'s Lookup,
    pub(super) args: Vec<&'s Param>,
    pub(super) groups: std::collections::BTreeSet<&'s String>,
}

pub(super) fn by_reference<'s>(spec: &'s Spec, op: &'s Operation) -> Option<ByReference<'s>> {
    let lookup = op.settle.as_ref()?.lookups.iter().find(|l| l.from_request_only())?;
    let read = spec.operation(&lookup.operation)?;
    let mut args: Vec<&Param> = Vec::new();
    for (_, source) in &lookup.params {
        if let KeySource::Request(from) = source
            && let Some(param) = op.params.iter().find(|p| &p.name == from)
            && !args.iter().any(|a| a.name == param.name)
        {
            args.push(param);
        }
    }
    let groups = [&read.group].into_iter().filter(|g| **g != op.group).collect();
    Some(ByReference { read, lookup, args, groups })
}

/// The arguments of a `settle_<op>_by_reference`: `name: impl Into<Type>, ...`.
pub(super) fn reference_params(args: &[&Param], names: &Names) -> String {
    args.iter()
        .map(|p| format!("{}: impl Into<{}>", field_ident(&p.name), names.value_type(p)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The text of a lookup value's source, as an `Option<String>` expression (`None` when
/// absent or empty).
fn source_text(op: &Operation, source: &KeySource) -> String {
    match source {
        KeySource::Request(from) => {
            let required = op.params.iter().any(|p| &p.name == from && p.required);
            let id = field_ident(from);
            if required {
                format!("Some(request.{id}.to_string()).filter(|v| !v.is_empty())")
            } else {
                format!("request.{id}.as_ref().map(|v| v.to_string()).filter(|v| !v.is_empty())")
            }
        }
        KeySource::Answer(path) => {
            let steps: String =
                path.iter().map(|step| format!(".and_then(|v| v.{}.as_ref())", field_ident(step))).collect();
            format!("data{steps}.map(|v| v.to_string()).filter(|v| !v.is_empty())")
        }
    }
}

/// A doc link to a lookup's method on its group's handle.
fn read_link(read: &Operation) -> String {
    format!("[`{}`]({}::{})", read.name, read.group.to_upper_camel_case(), field_ident(&read.name))
}

fn source_name(source: &KeySource) -> String {
    match source {
        KeySource::Request(from) => format!("request `{from}`"),
        KeySource::Answer(path) => format!("answer `{}`", path.join(".")),
    }
}

/// Whether a lookup gives a whole number (read back from its text, which may fail).
fn numeric(read: &Operation, lookup: &Lookup) -> bool {
    lookup.params.iter().any(|(name, _)| read.param(name).is_some_and(|p| p.ty == Type::Integer))
}

/// A lookup's request literal as an `Option`: in a closure where a number is read back
/// (its `?` leaves the lookup unmade), else `Some` of it.
fn made(numeric: bool, literal: &str) -> String {
    if numeric { format!("(|| Some({literal}))()") } else { format!("Some({literal})") }
}

/// The fields of a lookup's request literal: each parameter it gives, from `value(i)` (the
/// text of its `i`-th parameter), the others `None`.
fn lookup_fields(read: &Operation, lookup: &Lookup, value: &dyn Fn(usize) -> String) -> String {
    let mut fields = Vec::new();
    for param in settable(read) {
        let id = field_ident(&param.name);
        let given = lookup.params.iter().position(|(name, _)| *name == param.name);
        // A number is read back from its text (as the key was written); text that is no
        // number leaves the lookup unmade (`?` in the closure the literal is built in).
        let given = given.map(|i| match param.ty {
            Type::Integer => format!("{}.parse::<i64>().ok()?", value(i)),
            _ => format!("{}.into()", value(i)),
        });
        fields.push(match (given, param.required) {
            (Some(given), true) => format!("{id}: {given}"),
            (Some(given), false) => format!("{id}: Some({given})"),
            (None, _) => format!("{id}: None"),
        });
    }
    // Each set by the one parameter the lookup gives (the loader checks there is one).
    for set in &read.one_of {
        let given = set.params.iter().find_map(|member| {
            let i = lookup.params.iter().position(|(name, _)| name == member)?;
            Some((member, i))
        });
        if let Some((member, i)) = given {
            fields.push(format!(
                "{}: requests::{}::{}({}.into())",
                field_ident(&set.name),
                super::requests::one_of_type(read, set),
                super::requests::one_of_variant(member),
                value(i)
            ));
        }
    }
    fields.push("extra: Default::default()".to_owned());
    fields.join(", ")
}

/// What a settle method's doc says of the spec's states and timing.
fn settle_doc(settle: &Settle) -> Vec<String> {
    let list = |states: &[String]| {
        if states.is_empty() {
            "none".to_owned()
        } else {
            states.iter().map(|s| format!("`{s}`")).collect::<Vec<_>>().join(", ")
        }
    };
    let mut doc = vec![
        format!(
            "final states{}: succeeded {}, failed {}, refunded {}, reversed {}; any other state is pending.{}",
            settle.state_field.as_ref().map(|f| format!(" (the answer's `{f}`)")).unwrap_or_default(),
            list(&settle.succeeded),
            list(&settle.failed),
            list(&settle.refunded),
            list(&settle.reversed),
            settle
                .within_seconds
                .map(|s| format!(" The service documents that settling may take {s} s."))
                .unwrap_or_default()
        ),
        String::new(),
        "It waits and asks again with growing, jittered waits, the service's `Retry-After` and its rate-limit headers, within `options`' deadline (see [`rt::SettleOptions`]); a webhook fed to the options' [`rt::SettlementWatch`] ends the wait with one more request. Dropping the future stops it.".to_owned(),
    ];
    if let Some(note) = &settle.note {
        doc.push(String::new());
        doc.push(note.clone());
    }
    doc
}

fn gate_doc(others: &std::collections::BTreeSet<&String>) -> Vec<String> {
    if others.is_empty() {
        return Vec::new();
    }
    let features = others.iter().map(|g| format!("`{g}`")).collect::<Vec<_>>().join(", ");
    vec![String::new(), format!("Compiled with the features of the groups it asks too: {features}.")]
}
