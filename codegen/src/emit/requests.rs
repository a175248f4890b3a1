//! The `requests` module: one type per operation, its fields the operation's parameters,
//! and its `Operation` impl, one straight-line runtime call per parameter.

use super::{
    Names, data_type, doc_lines, field_ident, is_secret_text, request_type, route_const, takes_into,
};
use crate::model::{Operation, Param, ParamLocation, Spec, Type};
use heck::ToUpperCamelCase;
use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};

pub(super) fn requests_module(spec: &Spec, names: &Names) -> TokenStream {
    let requests = spec.operations.iter().map(|op| request_items(spec, op, names));
    quote! {
        /// One request type per operation: its fields carry the interface's names and
        /// travel under the spec's wire keys.
        pub mod requests {
            use ::payspec_client::runtime as rt;
            use ::std::fmt;
            #(#requests)*
        }
    }
}

/// The parameters the caller sets (fixed ones are sent by the client itself).
pub(super) fn settable(op: &Operation) -> impl Iterator<Item = &Param> {
    op.params.iter().filter(|p| p.fixed.is_none())
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
    let answers = &op.answers;
    if !answers.pending_statuses.is_empty() || !answers.pending_descriptions.is_empty() {
        let mut pending: Vec<String> =
            answers.pending_statuses.iter().map(|s| format!("`data.status` `{s}`")).collect();
        pending.extend(answers.pending_descriptions.iter().map(|d| format!("description `{d}`")));
        lines.push(String::new());
        lines.push(format!(
            "An answer with {} is `Outcome::Pending`: the operation is in flight; look it up, never send it again under a new reference.",
            pending.join(" or ")
        ));
    }
    if answers.success_codes.len() > 1 || !answers.note.is_empty() {
        lines.push(String::new());
        let codes: Vec<String> = answers.success_codes.iter().map(|c| format!("`{c}`")).collect();
        lines.push(format!("Success codes: {}.", codes.join(", ")));
        lines.extend(answers.note.iter().cloned());
    }
    lines
}

fn request_items(spec: &Spec, op: &Operation, names: &Names) -> TokenStream {
    let ty = request_type(op);
    let route = route_const(op);
    // Maintainers' notes (disagreements, origins) stay in the spec and `payspec routes`.
    let doc = doc_lines(&operation_doc(op));
    // Where fields the spec does not know travel: a GET has no body.
    let extra_place = if op.method == crate::model::Method::Get { "query string" } else { "body" };
    let extra_doc =
        format!(" Fields the spec does not know, sent in the {extra_place} under their (dotted) wire keys.");
    let extra_setter_doc = format!(
        " Adds a field the spec does not know, sent in the {extra_place} under `wire_key` (dots nest: `order.splitRequest`)."
    );
    let default = settable(op).all(|p| !p.required).then(|| {
        quote! {
            impl Default for #ty {
                fn default() -> Self { Self::new() }
            }
        }
    });

    let fields = settable(op).map(|param| {
        let ident = field_ident(&param.name);
        let value = names.value_type(param);
        let doc = doc_lines(&param_doc(param));
        if param.required {
            quote! { #doc pub #ident: #value, }
        } else {
            quote! { #doc pub #ident: Option<#value>, }
        }
    });

    let setters: Vec<TokenStream> = settable(op).filter(|p| !p.required).map(|p| setter(p, names)).collect();
    let construct = if positional(op, names) { constructor(op, names) } else { builder(op, names, &setters) };

    let writes = write_order(&op.params).into_iter().map(write_call);
    let data = data_type(op, quote! { super::types });
    let idempotency = op.idempotency.as_deref().and_then(|name| op.param(name)).map(|param| {
        let ident = field_ident(&param.name);
        // Validation admits only caller-set body or header values, all string-like here.
        let body = if param.required {
            quote! { Some(self.#ident.as_str()) }
        } else if matches!(param.ty, Type::Identifier(_)) {
            quote! { self.#ident.as_ref().map(|v| v.as_str()) }
        } else {
            quote! { self.#ident.as_deref() }
        };
        quote! {
            fn idempotency_key(&self) -> Option<&str> { #body }
        }
    });
    let debug_fields = settable(op).map(|param| {
        let ident = field_ident(&param.name);
        let label = &param.name;
        match (param.secret, param.required) {
            (true, true) => quote! { .field(#label, &rt::Redacted) },
            (true, false) => {
                quote! { .field(#label, &self.#ident.as_ref().map(|_| rt::Redacted)) }
            }
            (false, _) => quote! { .field(#label, &self.#ident) },
        }
    });
    let label = ty.to_string();
    let items = spec.page_items(op).map(|(shape, field)| {
        let item = names.field_item_type(&shape.name, field, &quote! { super::types });
        let ident = field_ident(&field.name);
        let take = if field.required {
            quote! { page.#ident }
        } else {
            quote! { page.#ident.unwrap_or_default() }
        };
        quote! {
            type Item = #item;
            fn items(page: Self::Data) -> Vec<Self::Item> { #take }
        }
    });
    let paginated = op.pagination.map(|style| {
        let variant = format_ident!("{}", style.as_str().to_upper_camel_case());
        let set_cursor = match op.param("cursor") {
            Some(_) => quote! { self.cursor = cursor.map(rt::Text::from); },
            None => quote! { let _ = cursor; },
        };
        let set_page = match op.param("page") {
            Some(_) => quote! { self.page = Some(i64::from(page)); },
            None => quote! { let _ = page; },
        };
        quote! {
            impl rt::Paginated for #ty {
                #items
                const STYLE: rt::PageStyle = rt::PageStyle::#variant;
                fn set_cursor(&mut self, cursor: Option<String>) { #set_cursor }
                fn set_page(&mut self, page: u32) { #set_page }
            }
        }
    });

    quote! {
        #doc
        #[derive(Clone)]
        #[non_exhaustive]
        pub struct #ty {
            #(#fields)*
            #[doc = #extra_doc]
            pub extra: rt::ExtraFields,
        }
        #construct
        impl #ty {
            #(#setters)*
            #[doc = #extra_setter_doc]
            pub fn extra_field(mut self, wire_key: impl Into<String>, value: rt::serde_json::Value) -> Self {
                self.extra.insert(wire_key, value);
                self
            }
        }
        #default
        impl fmt::Debug for #ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct(#label) #(#debug_fields)* .field("extra", &self.extra).finish()
            }
        }
        impl rt::Operation for #ty {
            type Data = #data;
            const ROUTE: &'static rt::Route = &super::routes::#route;
            fn write(&self, w: &mut rt::RequestWriter) -> Result<(), rt::Error> {
                #(#writes)*
                w.extra(&self.extra)
            }
            #idempotency
        }
        #paginated
    }
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
fn argument(param: &Param, names: &Names) -> (TokenStream, TokenStream) {
    let ident = field_ident(&param.name);
    let value = names.value_type(param);
    if takes_into(param, names) {
        (quote! { #ident: impl Into<#value> }, quote! { #ident.into() })
    } else {
        (quote! { #ident: #value }, quote! { #ident })
    }
}

/// The setter of one field: an optional one on the request and on its builder, a required
/// one on the builder (said in its doc).
fn setter(param: &Param, names: &Names) -> TokenStream {
    let ident = field_ident(&param.name);
    let (arg, into) = argument(param, names);
    let need = if param.required { " (required)" } else { "" };
    let doc = doc_lines(&[format!("Sets `{}`{need}.", param.name)]);
    quote! {
        #doc
        pub fn #ident(mut self, #arg) -> Self {
            self.#ident = Some(#into);
            self
        }
    }
}

/// `new`, taking the required fields positionally (they cannot be swapped).
fn constructor(op: &Operation, names: &Names) -> TokenStream {
    let ty = request_type(op);
    let args = settable(op).filter(|p| p.required).map(|p| argument(p, names).0);
    let fields = settable(op).map(|param| {
        let ident = field_ident(&param.name);
        if param.required && takes_into(param, names) {
            quote! { #ident: #ident.into(), }
        } else if param.required {
            quote! { #ident, }
        } else {
            quote! { #ident: None, }
        }
    });
    quote! {
        impl #ty {
            /// Creates the request from its required fields; set the others with the methods below.
            pub fn new(#(#args),*) -> Self {
                Self { #(#fields)* extra: Default::default() }
            }
        }
    }
}

/// `builder()`: a request whose required fields could be swapped if taken positionally
/// (two strings, two amounts) is built by naming each one; `build` refuses a missing one
/// before anything is sent.
fn builder(op: &Operation, names: &Names, optional_setters: &[TokenStream]) -> TokenStream {
    let ty = request_type(op);
    let builder = format_ident!("{}Builder", ty);
    let label = ty.to_string();
    let required: Vec<&Param> = settable(op).filter(|p| p.required).collect();
    let fields = settable(op).map(|param| {
        let ident = field_ident(&param.name);
        let value = names.value_type(param);
        quote! { #ident: Option<#value>, }
    });
    let required_setters = required.iter().map(|param| setter(param, names));
    let req_idents: Vec<Ident> = required.iter().map(|p| field_ident(&p.name)).collect();
    let req_names = required.iter().map(|p| p.name.as_str());
    let take = settable(op).map(|param| {
        let ident = field_ident(&param.name);
        if param.required {
            quote! { #ident, }
        } else {
            quote! { #ident: self.#ident, }
        }
    });
    let debug = settable(op).map(|param| {
        let ident = field_ident(&param.name);
        let label = &param.name;
        if param.secret {
            quote! { .field(#label, &self.#ident.as_ref().map(|_| rt::Redacted)) }
        } else {
            quote! { .field(#label, &self.#ident) }
        }
    });
    let builder_doc = format!(
        " Builds a [`{label}`] by naming each field; [`build`]({builder}::build) checks that every required one is set."
    );
    let builder_label = builder.to_string();
    let extra_doc = format!(" Adds a field the spec does not know (see [`{label}::extra`]).");
    quote! {
        impl #ty {
            /// Starts a request: set each required field by name, then `build()`.
            pub fn builder() -> #builder {
                #builder::default()
            }
        }
        #[doc = #builder_doc]
        #[derive(Clone, Default)]
        #[must_use]
        pub struct #builder {
            #(#fields)*
            extra: rt::ExtraFields,
        }
        impl #builder {
            #(#required_setters)*
            #(#optional_setters)*
            #[doc = #extra_doc]
            pub fn extra_field(mut self, wire_key: impl Into<String>, value: rt::serde_json::Value) -> Self {
                self.extra.insert(wire_key, value);
                self
            }
            /// The request, or `Error::InvalidRequest` naming every required field not set.
            pub fn build(self) -> Result<#ty, rt::Error> {
                match (#(self.#req_idents),*) {
                    (#(Some(#req_idents)),*) => Ok(#ty { #(#take)* extra: self.extra }),
                    (#(#req_idents),*) => Err(rt::Error::missing_fields(
                        #label,
                        &[#((#req_names, #req_idents.is_none())),*],
                    )),
                }
            }
        }
        impl fmt::Debug for #builder {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct(#builder_label) #(#debug)* .field("extra", &self.extra).finish()
            }
        }
    }
}

/// The order the parameters are written in: the others as declared, then the body fields
/// with each object's fields together, each object where its first field was declared.
/// The runtime writes a body in that order straight into its text, and the text is the
/// one any other order would give.
fn write_order(params: &[Param]) -> Vec<&Param> {
    let body: Vec<&Param> = params.iter().filter(|p| p.location == ParamLocation::Body).collect();
    // The first field declared inside each object.
    let mut first: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for (i, param) in body.iter().enumerate() {
        for (at, _) in param.wire.match_indices('.') {
            first.entry(&param.wire[..at]).or_insert(i);
        }
    }
    let mut keyed: Vec<(Vec<usize>, &Param)> = body
        .iter()
        .enumerate()
        .map(|(i, param)| {
            let mut key: Vec<usize> =
                param.wire.match_indices('.').map(|(at, _)| first[&param.wire[..at]]).collect();
            key.push(i);
            (key, *param)
        })
        .collect();
    keyed.sort_by(|a, b| a.0.cmp(&b.0));
    params
        .iter()
        .filter(|p| p.location != ParamLocation::Body)
        .chain(keyed.into_iter().map(|(_, p)| p))
        .collect()
}

/// The runtime call that puts one parameter on the wire.
fn write_call(param: &Param) -> TokenStream {
    let wire = &param.wire;
    if let Some(fixed) = &param.fixed {
        return match param.location {
            ParamLocation::Body => quote! { w.body(#wire, #fixed)?; },
            ParamLocation::Query => quote! { w.query(#wire, #fixed); },
            ParamLocation::Header => quote! { w.header(#wire, #fixed)?; },
            ParamLocation::Path => quote! { w.path(#wire, #fixed)?; },
        };
    }
    let ident = field_ident(&param.name);
    let mut put = write_value(param, &ident);
    if let Some(max) = param.max {
        // Checked before anything is sent.
        let wire = &param.wire;
        let value = if param.required {
            quote! { Some(&self.#ident) }
        } else {
            quote! { self.#ident.as_ref() }
        };
        put = quote! { w.at_most(#wire, #value, #max)?; #put };
    }
    if !param.secret {
        return put;
    }
    // Noted so that the client removes the value from any error, in any spelling.
    let note = if param.required {
        quote! { w.secret(&self.#ident); }
    } else {
        quote! { w.secret_opt(self.#ident.as_ref()); }
    };
    quote! { #note #put }
}

/// The runtime call that puts one caller-set value on the wire.
fn write_value(param: &Param, ident: &Ident) -> TokenStream {
    let wire = &param.wire;
    let secret = is_secret_text(param);
    let text_like = matches!(param.ty, Type::String | Type::Identifier(_)) && param.values.is_empty();
    let date = param.ty == Type::DateTime && !secret;
    let layout = format_ident!("{}", format!("{:?}", param.layout));
    // How one present value is turned into what the runtime call takes.
    let value = |v: TokenStream| -> TokenStream {
        match param.location {
            ParamLocation::Path | ParamLocation::Header | ParamLocation::Query if secret => {
                quote! { #v.expose() }
            }
            _ if date => quote! { &#v.to_wire(rt::DateLayout::#layout) },
            ParamLocation::Path | ParamLocation::Header if text_like => quote! { #v.as_str() },
            ParamLocation::Path | ParamLocation::Header => quote! { &#v.to_string() },
            ParamLocation::Query if param.ty == Type::StringList => quote! { &#v.join(",") },
            ParamLocation::Query => quote! { &#v },
            ParamLocation::Body if param.as_string && param.ty == Type::Decimal => {
                quote! { &#v.as_wire_string() }
            }
            ParamLocation::Body if param.as_string => quote! { &#v.to_string() },
            ParamLocation::Body => quote! { &#v },
        }
    };
    if param.required {
        let v = value(quote! { self.#ident });
        return match param.location {
            ParamLocation::Path => quote! { w.path(#wire, #v)?; },
            ParamLocation::Query => quote! { w.query(#wire, #v); },
            ParamLocation::Body => quote! { w.body(#wire, #v)?; },
            ParamLocation::Header => quote! { w.header(#wire, #v)?; },
        };
    }
    // Optional: the runtime's `_opt` calls skip an absent value.
    if date && param.location != ParamLocation::Header {
        let wire_text = quote! { self.#ident.as_ref().map(|v| v.to_wire(rt::DateLayout::#layout)) };
        return match param.location {
            ParamLocation::Body => quote! { w.body_opt(#wire, #wire_text.as_ref())?; },
            _ => quote! { w.query_opt(#wire, #wire_text.as_ref()); },
        };
    }
    match param.location {
        ParamLocation::Query if param.ty == Type::StringList => {
            quote! { w.query_opt(#wire, self.#ident.as_ref().map(|v| v.join(",")).as_ref()); }
        }
        ParamLocation::Query if secret => {
            quote! { w.query_opt(#wire, self.#ident.as_ref().map(|v| v.expose())); }
        }
        ParamLocation::Query => quote! { w.query_opt(#wire, self.#ident.as_ref()); },
        ParamLocation::Body if param.as_string && param.ty == Type::Decimal => {
            quote! { w.body_opt(#wire, self.#ident.as_ref().map(|v| v.as_wire_string()).as_ref())?; }
        }
        ParamLocation::Body if param.as_string => {
            quote! { w.body_opt(#wire, self.#ident.as_ref().map(|v| v.to_string()).as_ref())?; }
        }
        ParamLocation::Body => quote! { w.body_opt(#wire, self.#ident.as_ref())?; },
        ParamLocation::Header => {
            let v = value(quote! { v });
            quote! { if let Some(v) = &self.#ident { w.header(#wire, #v)?; } }
        }
        // Validation makes every path parameter required.
        ParamLocation::Path => TokenStream::new(),
    }
}
