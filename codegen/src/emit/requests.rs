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
    match param.origin {
        crate::model::Origin::Interface => {}
        crate::model::Origin::Reference => facts.push_str("; documented by the reference, not the interface"),
        crate::model::Origin::DeveloperDocs => {
            facts.push_str("; documented by the vendor's developer documentation, not the interface");
        }
        crate::model::Origin::Extension => facts.push_str("; an extension of this spec"),
    }
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

    let required: Vec<&Param> = settable(op).filter(|p| p.required).collect();
    let ctor_args = required.iter().map(|param| {
        let ident = field_ident(&param.name);
        let value = names.value_type(param);
        if takes_into(param, names) {
            quote! { #ident: impl Into<#value> }
        } else {
            quote! { #ident: #value }
        }
    });
    let ctor_fields = settable(op).map(|param| {
        let ident = field_ident(&param.name);
        match (param.required, takes_into(param, names)) {
            (true, true) => quote! { #ident: #ident.into(), },
            (true, false) => quote! { #ident, },
            (false, _) => quote! { #ident: None, },
        }
    });
    let setters = settable(op).filter(|p| !p.required).map(|param| {
        let ident = field_ident(&param.name);
        let value = names.value_type(param);
        let doc = doc_lines(&[format!("Sets `{}`.", param.name)]);
        if takes_into(param, names) {
            quote! {
                #doc
                pub fn #ident(mut self, #ident: impl Into<#value>) -> Self {
                    self.#ident = Some(#ident.into());
                    self
                }
            }
        } else {
            quote! {
                #doc
                pub fn #ident(mut self, #ident: #value) -> Self {
                    self.#ident = Some(#ident);
                    self
                }
            }
        }
    });

    let writes = op.params.iter().map(write_call);
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
            Some(_) => quote! { self.cursor = cursor; },
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
        impl #ty {
            /// Creates the request from its required fields; set the others with the methods below.
            #[allow(clippy::too_many_arguments)]
            pub fn new(#(#ctor_args),*) -> Self {
                Self { #(#ctor_fields)* extra: Default::default() }
            }
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
    let text_like =
        matches!(param.ty, Type::String | Type::DateTime | Type::Identifier(_)) && param.values.is_empty();
    let secret = is_secret_text(param);
    // How one present value is turned into what the runtime call takes.
    let value = |v: TokenStream| -> TokenStream {
        match param.location {
            ParamLocation::Path | ParamLocation::Header | ParamLocation::Query if secret => {
                quote! { #v.expose() }
            }
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
