//! The `types` module: typed identifiers, open enumerations, and the answers' shapes.

use super::{Names, doc_lines, field_ident};
use crate::model::{Shape, Spec};
use heck::ToUpperCamelCase;
use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};

pub(super) fn types_module(spec: &Spec, names: &Names) -> TokenStream {
    let identifiers = spec.identifiers.iter().map(|id| {
        let name = format_ident!("{}", id.name);
        let doc = doc_lines(std::slice::from_ref(&id.doc));
        quote! {
            #doc
            #[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
            #[derive(rt::serde::Serialize, rt::serde::Deserialize)]
            #[serde(crate = "::payspec_client::runtime::serde", transparent)]
            pub struct #name(rt::Text);
            impl #name {
                /// Wraps an identifier the service gave.
                pub fn new(value: impl Into<rt::Text>) -> Self { Self(value.into()) }
                /// The identifier as text.
                pub fn as_str(&self) -> &str { &self.0 }
            }
            impl From<&str> for #name {
                fn from(value: &str) -> Self { Self(value.into()) }
            }
            impl From<String> for #name {
                fn from(value: String) -> Self { Self(value.into()) }
            }
            impl fmt::Display for #name {
                fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result { f.write_str(&self.0) }
            }
            impl rt::FromJson for #name {
                fn read(reader: &mut rt::Reader<'_>, at: &rt::Path<'_>) -> Result<Self, rt::DecodeError> {
                    reader.str(at, "an identifier (a string)").map(|text| Self(text.into()))
                }
            }
            impl rt::ToJson for #name {
                fn to_json(&self) -> rt::Json { rt::Json::String(self.0.to_string()) }
            }
        }
    });
    let enums = names.all_enums().map(|def| {
        let name = format_ident!("{}", def.name);
        let variants = variant_names(&def.values);
        let items = def.values.iter().zip(&variants).map(|(value, variant)| {
            let doc = format!(" `{value}`");
            quote! { #[doc = #doc] #variant, }
        });
        let values = &def.values;
        let doc = format!(
            " The values the reference lists for `{}`; `Other` keeps any value added later.",
            def.values.join("`, `")
        );
        quote! {
            #[doc = #doc]
            #[derive(Clone, PartialEq, Eq, Hash, Debug)]
            pub enum #name {
                #(#items)*
                /// A value this spec does not list.
                Other(String),
            }
            impl #name {
                /// The value as the service writes it.
                pub fn as_str(&self) -> &str {
                    match self {
                        #(Self::#variants => #values,)*
                        Self::Other(text) => text,
                    }
                }
                /// The variant the service's text names (`Other` for a value not listed).
                pub fn from_wire(text: String) -> Self {
                    match text.as_str() {
                        #(#values => Self::#variants,)*
                        _ => Self::Other(text),
                    }
                }
            }
            impl fmt::Display for #name {
                fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str(self.as_str())
                }
            }
            impl rt::serde::Serialize for #name {
                fn serialize<S: rt::serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                    serializer.serialize_str(self.as_str())
                }
            }
            impl<'de> rt::serde::Deserialize<'de> for #name {
                fn deserialize<D: rt::serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                    <String as rt::serde::Deserialize>::deserialize(deserializer).map(Self::from_wire)
                }
            }
            impl rt::FromJson for #name {
                fn read(reader: &mut rt::Reader<'_>, at: &rt::Path<'_>) -> Result<Self, rt::DecodeError> {
                    reader.string(at, "one of the listed values (a string)").map(Self::from_wire)
                }
            }
            impl rt::ToJson for #name {
                fn to_json(&self) -> rt::Json { rt::Json::String(self.as_str().to_owned()) }
            }
        }
    });
    let shapes = spec.shapes.iter().map(|shape| answer_struct(shape, names));
    quote! {
        /// Typed identifiers, open enumerations of the values the reference lists, and
        /// the answers' shapes.
        pub mod types {
            use ::payspec_client::runtime as rt;
            use ::std::fmt;
            #(#identifiers)*
            #(#enums)*
            #(#shapes)*
        }
    }
}

/// UpperCamelCase variant names for wire values, unique within the enum.
pub(super) fn variant_names(values: &[String]) -> Vec<Ident> {
    const DIGITS: [&str; 10] =
        ["Zero", "One", "Two", "Three", "Four", "Five", "Six", "Seven", "Eight", "Nine"];
    let mut used: Vec<String> = vec!["Other".to_owned()];
    values
        .iter()
        .map(|value| {
            // ASCII letters and digits only, so that any value makes an identifier.
            let mut name: String =
                value.to_upper_camel_case().chars().filter(char::is_ascii_alphanumeric).collect();
            if let Some(first) = name.chars().next().and_then(|c| c.to_digit(10)) {
                name = format!("{}{}", DIGITS[first as usize], &name[1..]);
            }
            if name.is_empty() {
                name = "Empty".to_owned();
            }
            // `Self` cannot name a variant; a value spelled like it gets a suffix.
            if name == "Self" {
                name = "SelfValue".to_owned();
            }
            let base = name.clone();
            let mut n = 2;
            while used.contains(&name) {
                name = format!("{base}{n}");
                n += 1;
            }
            used.push(name.clone());
            format_ident!("{}", name)
        })
        .collect()
}

/// One answer shape: a struct of its declared fields plus the ones the spec does not know,
/// a `read` that fills one `Slot` per field straight from the answer's text, and the
/// straight-line list of `ObjectWriter` calls that writes it.
fn answer_struct(shape: &Shape, names: &Names) -> TokenStream {
    let name = format_ident!("{}", shape.name);
    let mut doc = shape.doc.clone();
    doc.push(String::new());
    doc.push(
        "Read exactly as the service sent it: amounts and numbers keep their text, unknown enumeration values are kept, and fields the spec does not declare are in `other_fields`.".to_owned(),
    );
    let doc = doc_lines(&doc);
    let fields = shape.fields.iter().map(|field| {
        let ident = field_ident(&field.name);
        let ty = names.field_type(&shape.name, field);
        let mut lines = field.doc.clone();
        let need = if field.required { "always present" } else { "may be absent or null" };
        lines.push(format!("Wire key `{}`; {need}.", field.wire));
        let doc = doc_lines(&lines);
        quote! { #doc pub #ident: #ty, }
    });
    // One slot per field, named after it with a prefix, so that no field name can shadow
    // `reader`, `at` or `key`.
    let slots: Vec<Ident> = shape.fields.iter().map(|field| format_ident!("slot_{}", field.name)).collect();
    let wires: Vec<&str> = shape.fields.iter().map(|field| field.wire.as_str()).collect();
    let values = shape.fields.iter().zip(&slots).map(|(field, slot)| {
        let ident = field_ident(&field.name);
        let wire = &field.wire;
        if field.required {
            quote! { #ident: #slot.required(at, #wire)?, }
        } else {
            quote! { #ident: #slot.optional(), }
        }
    });
    let writes = shape.fields.iter().map(|field| {
        let ident = field_ident(&field.name);
        let wire = &field.wire;
        if field.required {
            quote! { out.required(#wire, &self.#ident); }
        } else {
            quote! { out.optional(#wire, &self.#ident); }
        }
    });
    let debug_fields = shape.fields.iter().map(|field| {
        let ident = field_ident(&field.name);
        let label = &field.name;
        if field.secret {
            quote! { .field(#label, &rt::Redacted) }
        } else {
            quote! { .field(#label, &self.#ident) }
        }
    });
    let label = &shape.name;
    quote! {
        #doc
        #[derive(Clone, PartialEq)]
        #[non_exhaustive]
        pub struct #name {
            #(#fields)*
            /// The fields of the answer that the spec does not declare, as the service sent them.
            pub other_fields: rt::JsonObject,
        }
        impl rt::FromJson for #name {
            fn read(reader: &mut rt::Reader<'_>, at: &rt::Path<'_>) -> Result<Self, rt::DecodeError> {
                #(let mut #slots = rt::Slot::new();)*
                let mut other_fields = rt::JsonObject::new();
                reader.object(at, |key, reader| match key {
                    #(#wires => #slots.read(reader, at, key, &mut other_fields),)*
                    _ => other_fields.read_entry(key, reader, at),
                })?;
                Ok(Self { #(#values)* other_fields })
            }
        }
        impl rt::ToJson for #name {
            fn to_json(&self) -> rt::Json {
                let mut out = rt::ObjectWriter::new();
                #(#writes)*
                out.finish(&self.other_fields)
            }
        }
        impl rt::serde::Serialize for #name {
            fn serialize<S: rt::serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                rt::serialize_via_json(self, serializer)
            }
        }
        impl<'de> rt::serde::Deserialize<'de> for #name {
            fn deserialize<D: rt::serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                rt::deserialize_via_json(deserializer)
            }
        }
        impl fmt::Debug for #name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct(#label) #(#debug_fields)* .field("other_fields", &self.other_fields.len()).finish()
            }
        }
    }
}
