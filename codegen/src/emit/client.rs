//! The client: one accessor per group, one method per operation.

use super::requests::{operation_doc, settable};
use super::{Names, data_type, doc_lines, field_ident, request_type};
use crate::model::{Operation, Param, Spec};
use heck::{ToShoutySnakeCase, ToSnakeCase, ToUpperCamelCase};
use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};

/// One accessor method per group, `fn <group>(&self) -> <handle>`, where `handle` makes
/// the handle's type and its construction from the group's type name.
pub(super) fn group_accessors(
    spec: &Spec,
    handle: impl Fn(&Ident) -> (TokenStream, TokenStream),
) -> Vec<TokenStream> {
    spec.groups
        .iter()
        .map(|group| {
            let method = field_ident(&group.key.to_snake_case());
            let ty = format_ident!("{}", group.key.to_upper_camel_case());
            let (handle_type, construct) = handle(&ty);
            let doc = doc_lines(&[format!("{}: {}", group.title, group.doc.join(" "))]);
            quote! {
                #doc
                pub fn #method(&self) -> #handle_type { #construct }
            }
        })
        .collect()
}

pub(super) fn client_items(spec: &Spec, names: &Names, examples: Option<&str>) -> TokenStream {
    let accessors = group_accessors(spec, |ty| {
        (quote! { groups::#ty<'_> }, quote! { groups::#ty { session: &self.session } })
    });
    let handles = spec.groups.iter().map(|group| {
        let ty = format_ident!("{}", group.key.to_upper_camel_case());
        let mut doc = vec![format!("The {} operations.", group.title)];
        if !group.doc.is_empty() {
            doc.push(String::new());
            doc.extend(group.doc.iter().cloned());
        }
        if let Some(krate) = examples {
            doc.extend(super::examples::group_example(spec, group, names, krate));
        }
        let doc = doc_lines(&doc);
        let methods = spec
            .operations
            .iter()
            .filter(|op| op.group == group.key)
            .map(|op| client_methods(spec, op, names));
        quote! {
            #doc
            #[derive(Clone, Copy, Debug)]
            pub struct #ty<'a> { pub(crate) session: &'a rt::Session }
            // Each method returns a block rather than being an `async fn`, whose future would
            // hold its request twice.
            #[allow(clippy::manual_async_fn)]
            impl<'a> #ty<'a> { #(#methods)* }
        }
    });
    let environments = spec.environments.iter().map(|env| {
        let name = format_ident!("{}", env.name.to_shouty_snake_case());
        let url = &env.url;
        let doc = format!(" `{url}`");
        quote! { #[doc = #doc] pub const #name: &str = #url; }
    });
    let title = format!(" The client of the {}: one accessor per resource group.", spec.title);
    quote! {
        /// The base URLs the spec names.
        pub mod environments {
            #(#environments)*
        }

        pub use client::Client;

        /// The client type.
        pub mod client {
        use ::payspec_client::runtime as rt;
        use super::groups;
        use super::routes;

        #[doc = #title]
        ///
        /// Build it with [`Client::builder`]; every call goes through the hand-written runtime,
        /// which obtains and refreshes tokens, retries only when it is safe, and decodes answers.
        #[derive(Clone, Debug)]
        pub struct Client { session: rt::Session }

        impl Client {
            /// A builder that already knows the spec's token routes; `build()` returns this
            /// client.
            pub fn builder() -> rt::ClientBuilder<Client> {
                rt::ClientBuilder::new(routes::TOKEN)
            }
            /// The session underneath: `send_with` for per-call settings, `pages_with`,
            /// `revoke`.
            pub fn session(&self) -> &rt::Session { &self.session }
            #(#accessors)*
        }

        impl From<rt::Session> for Client {
            fn from(session: rt::Session) -> Self { Client { session } }
        }
        }

        /// One handle per resource group, each with one method per operation.
        pub mod groups {
            use ::payspec_client::runtime as rt;
            use super::requests;
            #(#handles)*
        }
    }
}

fn client_methods(spec: &Spec, op: &Operation, names: &Names) -> TokenStream {
    let method = field_ident(&op.name);
    let ty = request_type(op);
    let data = data_type(op, quote! { super::types });
    let mut doc = operation_doc(op);
    let params: Vec<&Param> = settable(op).collect();
    if !params.is_empty() {
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
    let doc = doc_lines(&doc);
    let listing = spec.page_items(op).map(|(shape, field)| {
        let item = names.field_item_type(&shape.name, field, &quote! { super::types });
        let pages = format_ident!("{}_pages", op.name);
        let items = format_ident!("{}_items", op.name);
        let page_doc = doc_lines(&[
            format!("Every page of [`{}`](Self::{}), in order.", op.name, op.name),
            String::new(),
            "Bound it with `client.session().pages_with(request, CallOptions::new().max_pages(n))`."
                .to_owned(),
        ]);
        let item_doc = doc_lines(&[
            format!("Every record of [`{}`](Self::{}), across its pages, in order:", op.name, op.name),
            "`while let Some(record) = listing.next().await`, or `listing.all().await`.".to_owned(),
            String::new(),
            "Bound it with `client.session().items_with(request, CallOptions::new().max_pages(n))`."
                .to_owned(),
        ]);
        quote! {
            #page_doc
            pub fn #pages(self, request: requests::#ty) -> rt::Listing<'a, #data> {
                self.session.pages(request)
            }
            #item_doc
            pub fn #items(
                self,
                request: requests::#ty,
            ) -> rt::Listing<'a, #item> {
                self.session.items(request)
            }
        }
    });
    quote! {
        #doc
        pub fn #method(
            self,
            request: requests::#ty,
        ) -> impl rt::Future<Output = Result<rt::Outcome<#data>, rt::Error>> + 'a {
            async move { self.session.send(&request).await }
        }
        #listing
    }
}
