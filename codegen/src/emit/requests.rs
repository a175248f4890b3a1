//! The `requests` module: one type per operation, its fields the operation's parameters,
//! and its `Operation` impl, one straight-line runtime call per parameter.

use super::code::{Code, Lit, join};
use super::names::{Gates, Names, data_type, field_ident, page_item, request_type, route_const, takes_into};
use super::request_write::{write_call, write_order};
use crate::model::{OneOf, Operation, Param, Spec, Type};
use heck::ToUpperCamelCase;

pub(super) fn requests_module(out: &mut Code, spec: &Spec, names: &Names, gates: &Gates) {
    out.push(
        "/// One request type per operation: its fields carry the interface's names and
/// travel under the spec's wire keys.
pub mod requests {
    // Unused when a crate compiles no group (see `Gates`).
    #[allow(unused_imports)]
    use ::payspec_runtime::__private as rt;
    #[allow(unused_imports)]
    use ::std::fmt;
",
    );
    for op in &spec.operations {
        out.gated(gates.group(&op.group).as_deref(), "    ", |out| request_items(out, spec, op, names));
    }
    out.push("}\n");
}

/// The parameters the caller sets one by one (fixed ones are sent by the client itself,
/// and those of a `one_of` set are chosen through its enum).
pub(super) fn settable(op: &Operation) -> impl Iterator<Item = &Param> + Clone {
    op.params.iter().filter(|p| p.fixed.is_none() && op.one_of_with(&p.name).is_none())
}

/// Each caller-set field's wire key and its name in the request type, a key of a `one_of`
/// set under the set's field: what names a refused field as the caller's code does.
fn operation_fields(op: &Operation) -> String {
    let own = settable(op).map(|p| (p.wire.as_str(), field_ident(&p.name)));
    let sets = op.one_of.iter().flat_map(|set| {
        set.params.iter().filter_map(|name| op.param(name)).map(|p| (p.wire.as_str(), field_ident(&set.name)))
    });
    let pairs: Vec<String> =
        own.chain(sets).map(|(wire, name)| format!("({}, {})", Lit(wire), Lit(&name))).collect();
    pairs.join(", ")
}

/// The enum of a `one_of` set: `FetchTransactionKey`.
pub(super) fn one_of_type(op: &Operation, set: &OneOf) -> String {
    format!("{}{}", request_type(op), set.name.to_upper_camel_case())
}

/// The enum's variant for one of its parameters: `MerchantTxRef`.
pub(super) fn one_of_variant(param: &str) -> String {
    param.to_upper_camel_case()
}

/// The enum of one `one_of` set: a variant per parameter, the one chosen written to the
/// wire, and `From` for each variant whose type no other variant has (a typed id).
fn one_of_items(out: &mut Code, op: &Operation, set: &OneOf, names: &Names) {
    let ty = one_of_type(op, set);
    let members: Vec<&Param> = set.params.iter().filter_map(|name| op.param(name)).collect();
    let mut doc = set.doc.clone();
    if !doc.is_empty() {
        doc.push(String::new());
    }
    doc.push(format!(
        "Exactly one is sent, under its own key: {}.",
        members.iter().map(|p| format!("`{}`", p.wire)).collect::<Vec<_>>().join(", ")
    ));
    out.doc("    ", &doc);
    write!(out, "    #[derive(Clone, Debug, PartialEq, Eq)]\n    pub enum {ty} {{\n");
    for param in &members {
        out.doc("        ", &param_doc(param));
        writeln!(out, "        {}({}),", one_of_variant(&param.name), names.value_type(param));
    }
    write!(out, "    }}\n    impl {ty} {{\n");
    for param in &members {
        let (arg, into) = argument(param, names);
        out.doc_line("        ", &format!("Chooses `{}`, sent as `{}`.", param.name, param.wire));
        writeln!(
            out,
            "        pub fn {}({arg}) -> Self {{ Self::{}({into}) }}",
            field_ident(&param.name),
            one_of_variant(&param.name)
        );
    }
    out.push(
        "        /// The wire key of the chosen value.
        pub fn wire_key(&self) -> &'static str {
            match self {
",
    );
    for param in &members {
        writeln!(out, "                Self::{}(_) => {},", one_of_variant(&param.name), Lit(&param.wire));
    }
    write!(
        out,
        "            }}
        }}
        /// The chosen value, as it is sent.
        pub fn value(&self) -> &str {{
            match self {{
"
    );
    for param in &members {
        writeln!(out, "                Self::{}(v) => v.as_str(),", one_of_variant(&param.name));
    }
    write!(
        out,
        "            }}
        }}
        fn write(&self, w: &mut rt::RequestWriter) -> Result<(), rt::Error> {{
            w.text(self.wire_key(), Some(self.value()), rt::TextRule {{ not_blank: true, format: rt::TextFormat::Any, length: None }})?;
            w.query(self.wire_key(), self.value());
            Ok(())
        }}
    }}
"
    );
    for param in &members {
        let value = names.value_type(param);
        let unique = members.iter().filter(|p| names.value_type(p) == value).count() == 1;
        if unique && matches!(param.ty, Type::Identifier(_)) {
            write!(
                out,
                "    impl From<{value}> for {ty} {{
        fn from(value: {value}) -> Self {{
            Self::{}(value)
        }}
    }}
",
                one_of_variant(&param.name)
            );
        }
    }
}

fn param_doc(param: &Param) -> Vec<String> {
    let mut lines = param.doc.clone();
    let mut facts = format!("Sent in the {} as `{}`", param.location.as_str(), param.wire);
    if param.as_string {
        facts.push_str(", as a JSON string");
    }
    if param.ty == Type::DateTime {
        facts.push_str(&format!(", in UTC as `{}`", param.layout.pattern()));
    }
    // Where the parameter came from is a maintainers' fact: it stays in the spec and
    // `payspec routes`.
    facts.push('.');
    lines.push(facts);
    lines
}

pub(super) fn operation_doc(op: &Operation) -> Vec<String> {
    let mut lines = vec![op.summary.clone()];
    if !op.doc.is_empty() {
        lines.push(String::new());
        lines.extend(op.doc.iter().cloned());
    }
    lines.push(String::new());
    lines.push(format!("Sends a `{}` request to `{}`.", op.method, op.path));
    for alias in &op.aliases {
        lines.push(format!("Also answered at `{} {}`: {}", alias.method, alias.path, alias.note));
    }
    for listing in &op.also_listed_as {
        let name = listing.name.as_deref().map(|n| format!(" as `{n}`")).unwrap_or_default();
        lines.push(format!("Also listed under `{}`{name}: {}", listing.group, listing.note));
    }
    if let (Some(header), Some(key)) = (&op.idempotency_header, &op.idempotency) {
        lines.push(String::new());
        lines.push(format!(
            "Sends `{key}` in the `{}` header too, which the service deduplicates on: a timeout, \
             a reset, or a 429, 500, 502, 503 or 504 answer is retried with the same key and the \
             same bytes, within the call's deadline. {}",
            header.wire, header.note
        ));
    }
    if let Some(why) = &op.unsettled {
        lines.push(String::new());
        lines.push(format!("Its final state cannot be followed with a `settle_` method: {why}"));
    }
    let answers = &op.answers;
    if !answers.reading.pending_statuses.is_empty() || !answers.reading.pending_descriptions.is_empty() {
        let mut pending: Vec<String> =
            answers.reading.pending_statuses.iter().map(|s| format!("`data.status` `{s}`")).collect();
        pending.extend(answers.reading.pending_descriptions.iter().map(|d| format!("description `{d}`")));
        lines.push(String::new());
        lines.push(format!(
            "An answer with {} is `Outcome::Pending`: the operation is in flight; look it up, never send it again under a new reference.",
            pending.join(" or ")
        ));
    }
    if answers.reading.success_codes.len() > 1 || !answers.note.is_empty() {
        lines.push(String::new());
        let codes: Vec<String> = answers.reading.success_codes.iter().map(|c| format!("`{c}`")).collect();
        lines.push(format!("Success codes: {}.", codes.join(", ")));
        lines.extend(answers.note.iter().cloned());
    }
    lines
}

fn request_items(out: &mut Code, spec: &Spec, op: &Operation, names: &Names) {
    let ty = request_type(op);
    for set in &op.one_of {
        one_of_items(out, op, set, names);
    }
    // Maintainers' notes (disagreements, origins) stay in the spec and `payspec routes`.
    out.doc("    ", &operation_doc(op));
    write!(out, "    #[derive(Clone)]\n    #[non_exhaustive]\n    pub struct {ty} {{\n");
    for param in settable(op) {
        out.doc("        ", &param_doc(param));
        let (ident, value) = (field_ident(&param.name), names.value_type(param));
        if param.required {
            writeln!(out, "        pub {ident}: {value},");
        } else {
            writeln!(out, "        pub {ident}: Option<{value}>,");
        }
    }
    for set in &op.one_of {
        out.doc_line("        ", &format!("Which one of {} is sent.", member_list(set)));
        writeln!(out, "        pub {}: {},", field_ident(&set.name), one_of_type(op, set));
    }
    // Where fields the spec does not know travel: a GET has no body.
    let extra_place = if op.method == crate::model::Method::Get { "query string" } else { "body" };
    write!(
        out,
        "        /// Fields the spec does not know, sent in the {extra_place} under their (dotted) wire keys.
        pub extra: rt::ExtraFields,
    }}
"
    );
    // Every request has a builder; one whose required fields cannot be swapped has `new` too.
    let positional = positional(op, names);
    if positional {
        constructor(out, op, names);
    }
    builder_items(out, op, names, positional);
    writeln!(out, "    impl {ty} {{");
    for param in settable(op).filter(|p| !p.required) {
        setter(out, param, names);
    }
    extra_setter(
        out,
        &format!(
            "Adds a field the spec does not know, sent in the {extra_place} under `wire_key` (dots nest: `order.splitRequest`)."
        ),
    );
    out.push("    }\n");
    if settable(op).all(|p| !p.required) && op.one_of.is_empty() {
        write!(out, "    impl Default for {ty} {{\n        fn default() -> Self {{ Self::new() }}\n    }}\n");
    }
    write!(
        out,
        "    impl fmt::Debug for {ty} {{
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {{
            f.debug_struct({label})
",
        label = Lit(&ty)
    );
    for param in settable(op) {
        let (label, ident) = (Lit(&param.name), field_ident(&param.name));
        match (param.secret, param.required) {
            (true, true) => writeln!(out, "                .field({label}, &rt::Redacted)"),
            (true, false) => {
                writeln!(out, "                .field({label}, &self.{ident}.as_ref().map(|_| rt::Redacted))")
            }
            (false, _) => writeln!(out, "                .field({label}, &self.{ident})"),
        }
    }
    for set in &op.one_of {
        writeln!(out, "                .field({}, &self.{})", Lit(&set.name), field_ident(&set.name));
    }
    write!(
        out,
        "                .field(\"extra\", &self.extra)
                .finish()
        }}
    }}
    impl rt::Operation for {ty} {{
        type Data = {data};
        const ROUTE: &'static rt::Route = &super::routes::{route};
        const FIELDS: &'static [(&'static str, &'static str)] = &[{fields}];
        fn write(&self, w: &mut rt::RequestWriter) -> Result<(), rt::Error> {{
",
        data = data_type(op, "super::types"),
        route = route_const(op),
        fields = operation_fields(op),
    );
    for param in write_order(&op.params) {
        let reference = op.idempotency.as_deref() == Some(param.name.as_str());
        // The reference that is itself the idempotency header: the runtime sends it once.
        if op.one_of_with(&param.name).is_none() {
            write_call(out, param, reference, !op.is_idempotency_header(param));
        }
    }
    for set in &op.one_of {
        writeln!(out, "            self.{}.write(w)?;", field_ident(&set.name));
    }
    out.push("            w.extra(&self.extra)\n        }\n");
    if let Some(param) = op.idempotency.as_deref().and_then(|name| op.param(name)) {
        let ident = field_ident(&param.name);
        // Validation admits only caller-set body or header values, all string-like here.
        let body = if param.required {
            format!("Some(self.{ident}.as_str())")
        } else if matches!(param.ty, Type::Identifier(_)) {
            format!("self.{ident}.as_ref().map(|v| v.as_str())")
        } else {
            format!("self.{ident}.as_deref()")
        };
        writeln!(out, "        fn idempotency_key(&self) -> Option<&str> {{ {body} }}");
    }
    out.push("    }\n");
    if let Some(style) = &op.pagination {
        writeln!(out, "    impl rt::Paginated for {ty} {{");
        if let Some(items) = spec.page_items(op) {
            let (item, take) = page_item(items, names, "super::types");
            write!(
                out,
                "        type Item = {item};\n        fn items(page: Self::Data) -> Vec<Self::Item> {{ {take} }}\n"
            );
        }
        let set_cursor = match op.param("cursor") {
            Some(_) => "self.cursor = cursor.map(rt::Text::from);",
            None => "let _ = cursor;",
        };
        let (set_page, page) = match op.param("page") {
            Some(_) => {
                ("self.page = Some(i64::from(page));", "self.page.and_then(|p| u32::try_from(p).ok())")
            }
            None => ("let _ = page;", "None"),
        };
        let style = payspec_vocabulary::rust::value(style, "rt");
        write!(
            out,
            "        const STYLE: rt::PageStyle = {style};
        fn set_cursor(&mut self, cursor: Option<String>) {{ {set_cursor} }}
        fn set_page(&mut self, page: u32) {{ {set_page} }}
        fn page(&self) -> Option<u32> {{ {page} }}
    }}
",
        );
    }
}

/// The wire keys of a set, for docs: "`transactionRef`, `merchantTxRef`".
fn member_list(set: &OneOf) -> String {
    set.params.iter().map(|p| format!("`{p}`")).collect::<Vec<_>>().join(", ")
}

/// The setter of a `one_of` set on a builder.
fn one_of_setter(out: &mut Code, op: &Operation, set: &OneOf) {
    let ident = field_ident(&set.name);
    out.doc_line(
        "        ",
        &format!("Sets `{}` (required): which one of {} is sent.", set.name, member_list(set)),
    );
    write!(
        out,
        "        #[inline]
        pub fn {ident}(mut self, {ident}: impl Into<{ty}>) -> Self {{
            self.{ident} = Some({ident}.into());
            self
        }}
",
        ty = one_of_type(op, set)
    );
}

/// `extra_field`, on a request or its builder.
fn extra_setter(out: &mut Code, doc: &str) {
    out.doc_line("        ", doc);
    out.push(
        "        pub fn extra_field(mut self, wire_key: impl Into<String>, value: rt::serde_json::Value) -> Self {
            self.extra.insert(wire_key, value);
            self
        }
",
    );
}

/// Whether the required parameters can be taken positionally: no two of them accept the
/// same argument (every string-like value converts from `&str`), so that swapping two
/// arguments cannot compile.
pub(super) fn positional(op: &Operation, names: &Names) -> bool {
    let mut kinds: Vec<String> = Vec::new();
    for param in settable(op).filter(|p| p.required) {
        let kind =
            if takes_into(param, names) { "text".to_owned() } else { names.value_type(param).to_string() };
        if kinds.contains(&kind) {
            return false;
        }
        kinds.push(kind);
    }
    true
}

/// The argument a setter or constructor takes for `param`, and how it becomes the value.
fn argument(param: &Param, names: &Names) -> (String, String) {
    let ident = field_ident(&param.name);
    let value = names.value_type(param);
    if takes_into(param, names) {
        (format!("{ident}: impl Into<{value}>"), format!("{ident}.into()"))
    } else {
        (format!("{ident}: {value}"), ident)
    }
}

/// The setter of one field: an optional one on the request and on its builder, a required
/// one on the builder (said in its doc).
fn setter(out: &mut Code, param: &Param, names: &Names) {
    let ident = field_ident(&param.name);
    let (arg, into) = argument(param, names);
    let need = if param.required { " (required)" } else { "" };
    // From text, the way: in the doc (an editor's hover), and at the end of the signature's
    // line, which the compiler quotes under "method defined here" when text is passed.
    let from_text = match param.ty {
        Type::Decimal => Some("\"2500.00\".parse()?"),
        Type::DateTime => Some("\"2024-09-30T23:59:59Z\".parse()?"),
        _ => None,
    };
    match from_text {
        Some(how) => out.doc_line("        ", &format!("Sets `{}`{need}; from text: `{how}`.", param.name)),
        None => out.doc_line("        ", &format!("Sets `{}`{need}.", param.name)),
    }
    let hint = from_text.map(|how| format!(" // from text: `{how}`")).unwrap_or_default();
    write!(
        out,
        "        #[inline]
        pub fn {ident}(mut self, {arg}) -> Self {{{hint}
            self.{ident} = Some({into});
            self
        }}
"
    );
}

/// `new`, taking the required fields positionally (they cannot be swapped).
fn constructor(out: &mut Code, op: &Operation, names: &Names) {
    let mut args = join(settable(op).filter(|p| p.required), ", ", |f, p| f.write_str(&argument(p, names).0))
        .to_string();
    for set in &op.one_of {
        if !args.is_empty() {
            args.push_str(", ");
        }
        args.push_str(&format!("{}: impl Into<{}>", field_ident(&set.name), one_of_type(op, set)));
    }
    write!(
        out,
        "    impl {ty} {{
        /// Creates the request from its required fields; set the others with the methods below.
        pub fn new({args}) -> Self {{
            Self {{
",
        ty = request_type(op)
    );
    for param in settable(op) {
        let ident = field_ident(&param.name);
        if param.required && takes_into(param, names) {
            writeln!(out, "                {ident}: {ident}.into(),");
        } else if param.required {
            writeln!(out, "                {ident},");
        } else {
            writeln!(out, "                {ident}: None,");
        }
    }
    for set in &op.one_of {
        let ident = field_ident(&set.name);
        writeln!(out, "                {ident}: {ident}.into(),");
    }
    out.push("                extra: Default::default(),\n            }\n        }\n    }\n");
}

/// `builder()`, on every request: each field set by name, and `build` refuses a missing
/// required one before anything is sent. A request whose required fields could be swapped if
/// taken positionally (two strings, two amounts) has no `new` beside it.
fn builder_items(out: &mut Code, op: &Operation, names: &Names, has_new: bool) {
    let ty = request_type(op);
    let builder = format!("{ty}Builder");
    let required: Vec<&Param> = settable(op).filter(|p| p.required).collect();
    let (why, alias) = if has_new {
        ("", "")
    } else {
        (
            "
        /// This request has no `new`: two of its required fields take the same kind of value
        /// and could be swapped, so each is named.",
            "
        #[doc(alias = \"new\")]",
        )
    };
    write!(
        out,
        "    impl {ty} {{
        /// Starts a request: set each required field by name, then `build()`.{why}{alias}
        #[inline]
        pub fn builder() -> {builder} {{
            {builder}::default()
        }}
    }}
"
    );
    out.doc_line(
        "    ",
        &format!(
            "Builds a [`{ty}`] by naming each field; [`build`]({builder}::build) checks that every required one is set."
        ),
    );
    write!(out, "    #[derive(Clone, Default)]\n    #[must_use]\n    pub struct {builder} {{\n");
    for param in settable(op) {
        writeln!(out, "        {}: Option<{}>,", field_ident(&param.name), names.value_type(param));
    }
    for set in &op.one_of {
        writeln!(out, "        {}: Option<{}>,", field_ident(&set.name), one_of_type(op, set));
    }
    write!(out, "        extra: rt::ExtraFields,\n    }}\n    impl {builder} {{\n");
    for param in &required {
        setter(out, param, names);
    }
    for set in &op.one_of {
        one_of_setter(out, op, set);
    }
    for param in settable(op).filter(|p| !p.required) {
        setter(out, param, names);
    }
    extra_setter(out, &format!("Adds a field the spec does not know (see [`{ty}::extra`])."));
    let labels: Vec<&str> =
        required.iter().map(|p| p.name.as_str()).chain(op.one_of.iter().map(|s| s.name.as_str())).collect();
    let idents: Vec<String> = labels.iter().map(|name| field_ident(name)).collect();
    // A tuple of several, a plain value of one.
    let tuple = |inner: String| if idents.len() == 1 { inner } else { format!("({inner})") };
    let fields = tuple(join(&idents, ", ", |f, ident| write!(f, "self.{ident}")).to_string());
    let somes = tuple(join(&idents, ", ", |f, ident| write!(f, "Some({ident})")).to_string());
    let plain = tuple(join(&idents, ", ", |f, ident| f.write_str(ident)).to_string());
    let mut take = join(settable(op), " ", |f, param| {
        let ident = field_ident(&param.name);
        if param.required { write!(f, "{ident},") } else { write!(f, "{ident}: self.{ident},") }
    })
    .to_string();
    for set in &op.one_of {
        take.push_str(&format!(" {},", field_ident(&set.name)));
    }
    let missing = join(labels.iter().zip(&idents), ", ", |f, (label, ident)| {
        write!(f, "({}, {ident}.is_none())", Lit(label))
    });
    // With no required field, nothing can be missing.
    let body = if idents.is_empty() {
        format!("Ok({ty} {{ {take} extra: self.extra }})")
    } else {
        format!(
            "match {fields} {{
                {somes} => Ok({ty} {{ {take} extra: self.extra }}),
                {plain} => Err(rt::Error::missing_fields(
                    {label},
                    &[{missing}],
                )),
            }}",
            label = Lit(&ty),
        )
    };
    write!(
        out,
        "        /// The request, or `ErrorDetail::InvalidRequest` naming every required field not set.
        #[inline]
        pub fn build(self) -> Result<{ty}, rt::Error> {{
            {body}
        }}
    }}
    impl fmt::Debug for {builder} {{
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {{
            f.debug_struct({builder_label})
",
        builder_label = Lit(&builder),
    );
    for param in settable(op) {
        let (label, ident) = (Lit(&param.name), field_ident(&param.name));
        if param.secret {
            writeln!(out, "                .field({label}, &self.{ident}.as_ref().map(|_| rt::Redacted))");
        } else {
            writeln!(out, "                .field({label}, &self.{ident})");
        }
    }
    for set in &op.one_of {
        writeln!(out, "                .field({}, &self.{})", Lit(&set.name), field_ident(&set.name));
    }
    out.push("                .field(\"extra\", &self.extra)\n                .finish()\n        }\n    }\n");
}
