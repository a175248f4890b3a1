//! The `blocking` module of `payspec-client` (its `blocking` feature): the same operations
//! without an async runtime in the caller's code. Each method hands the async method to the
//! runtime's `BlockingRuntime`; listings are read to their end.

use super::client::group_accessors;
use super::{Names, data_type, doc_lines, field_ident, request_type};
use crate::model::{Operation, Spec};
use heck::{ToSnakeCase, ToUpperCamelCase};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

/// The blocking client of `spec`, as items of a module inside `payspec-client`.
pub(super) fn blocking_items(spec: &Spec, names: &Names) -> TokenStream {
    let accessors = group_accessors(spec, |ty| (quote! { #ty<'_> }, quote! { #ty { client: self } }));
    let handles = spec.groups.iter().map(|group| {
        let ty = format_ident!("{}", group.key.to_upper_camel_case());
        let async_group = field_ident(&group.key.to_snake_case());
        let doc = doc_lines(&[format!("The {} operations, blocking.", group.title)]);
        let methods = spec
            .operations
            .iter()
            .filter(|op| op.group == group.key)
            .map(|op| blocking_methods(spec, op, names, &async_group));
        quote! {
            #doc
            #[derive(Clone, Copy, Debug)]
            pub struct #ty<'a> { client: &'a Client }
            impl #ty<'_> { #(#methods)* }
        }
    });
    quote! {
        use ::payspec_client::runtime as rt;
        use super::requests;

        /// The client for code without an async runtime (scripts, command-line tools): the
        /// same groups and operations as [`crate::Client`], each call run to its end on a
        /// runtime of its own. Do not use it inside async code.
        #[derive(Debug)]
        pub struct Client {
            client: super::Client,
            runtime: rt::BlockingRuntime,
        }

        impl Client {
            /// Wraps an async client, built as usual with `Client::builder()`.
            pub fn new(client: super::Client) -> Result<Self, rt::Error> {
                Ok(Client { client, runtime: rt::BlockingRuntime::new()? })
            }
            /// The async client inside.
            pub fn inner(&self) -> &super::Client { &self.client }
            #(#accessors)*
        }

        #(#handles)*
    }
}

fn blocking_methods(spec: &Spec, op: &Operation, names: &Names, group: &proc_macro2::Ident) -> TokenStream {
    let method = field_ident(&op.name);
    let ty = request_type(op);
    let data = data_type(op, quote! { super::types });
    let doc = doc_lines(&[format!("[`{}`](crate::groups), blocking: {}", op.name, op.summary)]);
    let items = spec.page_items(op).map(|(shape, field)| {
        let item = names.field_item_type(&shape.name, field, &quote! { super::types });
        let items = format_ident!("{}_items", op.name);
        let doc = doc_lines(&[format!(
            "Every record of `{}`, across its pages: the whole listing, read to its end.",
            op.name
        )]);
        quote! {
            #doc
            pub fn #items(&self, request: requests::#ty) -> Result<Vec<#item>, rt::Error> {
                self.client.runtime.block_on(self.client.client.#group().#items(request).all())
            }
        }
    });
    quote! {
        #doc
        pub fn #method(&self, request: requests::#ty) -> Result<rt::Outcome<#data>, rt::Error> {
            self.client.runtime.block_on(self.client.client.#group().#method(request))
        }
        #items
    }
}
