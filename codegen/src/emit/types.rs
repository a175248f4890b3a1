//! The `types` module: typed identifiers, open enumerations, and the answers' shapes.

use super::code::{Code, Lit};
use super::names::variant_names;
use super::names::{Gates, Names, field_ident};
use crate::model::{PageStyle, Shape, Spec, Type};

pub(super) fn types_module(out: &mut Code, spec: &Spec, names: &Names, gates: &Gates) {
    out.push(
        "/// Typed identifiers, open enumerations of the values the reference lists, and
/// the answers' shapes.
pub mod types {
    use ::payspec_runtime::__private as rt;
    use ::std::fmt;
",
    );
    for id in &spec.identifiers {
        out.doc_line("    ", &id.doc);
        write!(
            out,
            r#"    #[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
    #[derive(rt::serde::Serialize, rt::serde::Deserialize)]
    #[serde(crate = "::payspec_runtime::__private::serde", transparent)]
    pub struct {name}(rt::Text);
    impl {name} {{
        /// Wraps an identifier the service gave.
        pub fn new(value: impl Into<rt::Text>) -> Self {{ Self(value.into()) }}
        /// The identifier as text.
        pub fn as_str(&self) -> &str {{ &self.0 }}
    }}
    impl From<&str> for {name} {{
        fn from(value: &str) -> Self {{ Self(value.into()) }}
    }}
    impl From<String> for {name} {{
        fn from(value: String) -> Self {{ Self(value.into()) }}
    }}
    impl fmt::Display for {name} {{
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {{ f.write_str(&self.0) }}
    }}
    impl rt::FromJson for {name} {{
        fn read(reader: &mut rt::Reader<'_>, at: &rt::Path<'_>) -> Result<Self, rt::DecodeError> {{
            reader.str(at, "an identifier (a string)").map(|text| Self(text.into()))
        }}
    }}
    impl rt::ToJson for {name} {{
        fn to_json(&self) -> rt::Json {{ rt::Json::String(self.0.to_string()) }}
    }}
"#,
            name = id.name
        );
    }
    for def in names.all_enums() {
        out.gated(gates.enumeration(&def.name).as_deref(), "    ", |out| {
            let name = &def.name;
            let variants = variant_names(&def.values);
            out.doc_line(
                "    ",
                &format!(
                    "The values the reference lists for `{}`; `Other` keeps any value added later.",
                    def.values.join("`, `")
                ),
            );
            write!(out, "    #[derive(Clone, PartialEq, Eq, Hash, Debug)]\n    pub enum {name} {{\n");
            for (value, variant) in def.values.iter().zip(&variants) {
                write!(out, "        /// `{value}`\n        {variant},\n");
            }
            out.push(
                "        /// A value this spec does not list.
        Other(String),
    }
",
            );
            write!(
                out,
                "    impl {name} {{
        /// The value as the service writes it.
        pub fn as_str(&self) -> &str {{
            match self {{
"
            );
            for (value, variant) in def.values.iter().zip(&variants) {
                writeln!(out, "                Self::{variant} => {},", Lit(value));
            }
            out.push(
                "                Self::Other(text) => text,
            }
        }
        /// The variant the service's text names (`Other` for a value not listed).
        pub fn from_wire(text: String) -> Self {
            match text.as_str() {
",
            );
            for (value, variant) in def.values.iter().zip(&variants) {
                writeln!(out, "                {} => Self::{variant},", Lit(value));
            }
            write!(
                out,
                r#"                _ => Self::Other(text),
            }}
        }}
    }}
    impl fmt::Display for {name} {{
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {{
            f.write_str(self.as_str())
        }}
    }}
    impl rt::serde::Serialize for {name} {{
        fn serialize<S: rt::serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {{
            serializer.serialize_str(self.as_str())
        }}
    }}
    impl<'de> rt::serde::Deserialize<'de> for {name} {{
        fn deserialize<D: rt::serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {{
            <String as rt::serde::Deserialize>::deserialize(deserializer).map(Self::from_wire)
        }}
    }}
    impl rt::FromJson for {name} {{
        fn read(reader: &mut rt::Reader<'_>, at: &rt::Path<'_>) -> Result<Self, rt::DecodeError> {{
            reader.string(at, "one of the listed values (a string)").map(Self::from_wire)
        }}
    }}
    impl rt::ToJson for {name} {{
        fn to_json(&self) -> rt::Json {{ rt::Json::String(self.as_str().to_owned()) }}
    }}
"#
            );
        });
    }
    // The data of a cursor listing: its `cursor` is text the service may send as a number.
    let cursor_pages: Vec<&str> = spec
        .operations
        .iter()
        .filter(|op| matches!(op.pagination, Some(PageStyle::Cursor { .. })))
        .filter_map(|op| op.response.as_ref())
        .filter_map(|answer| match &answer.ty {
            Type::Shape(name) if !answer.list => Some(name.as_str()),
            _ => None,
        })
        .collect();
    for shape in &spec.shapes {
        let cursor = cursor_pages.contains(&shape.name.as_str());
        out.gated(gates.shape(&shape.name).as_deref(), "    ", |out| {
            answer_struct(out, shape, names, cursor)
        });
    }
    out.push("}\n");
}

/// One answer shape: a struct of its declared fields plus the ones the spec does not know,
/// a `read` that fills each field in its place straight from the answer's text, and the
/// straight-line list of `ObjectWriter` calls that writes it.
fn answer_struct(out: &mut Code, shape: &Shape, names: &Names, cursor_page: bool) {
    let name = &shape.name;
    out.doc("    ", &shape.doc);
    out.doc(
        "    ",
        &[
            "",
            "Read exactly as the service sent it: amounts and numbers keep their text, unknown enumeration values are kept, and fields the spec does not declare are in `other_fields`.",
        ],
    );
    write!(out, "    #[derive(Clone, PartialEq)]\n    #[non_exhaustive]\n    pub struct {name} {{\n");
    for field in &shape.fields {
        out.doc("        ", &field.doc);
        // Every answer field is optional: the service omits fields its document calls
        // required, and a success is never turned into an error by its data's shape.
        let need = if field.required {
            "the vendor's document calls it required, but the service may omit it"
        } else {
            "may be absent or null"
        };
        out.doc_line("        ", &format!("Wire key `{}`; {need}.", field.wire));
        let ty = names.field_type(&shape.name, field);
        writeln!(out, "        pub {}: {ty},", field_ident(&field.name));
    }
    write!(
        out,
        "        /// The fields of the answer that the spec does not declare, as the service sent them.
        pub other_fields: rt::JsonObject,
    }}
    impl rt::FromJson for {name} {{
        fn read(reader: &mut rt::Reader<'_>, at: &rt::Path<'_>) -> Result<Self, rt::DecodeError> {{
"
    );
    // The value starts with every field `None` and each entry is read into its place:
    // nothing is moved at the end. The value is `answer`, which no field's name can shadow
    // (fields are reached through it), nor `reader`, `at`, `key` or `seen`.
    out.push("            let mut answer = Self {\n");
    for field in &shape.fields {
        writeln!(out, "                {}: None,", field_ident(&field.name));
    }
    out.push("                other_fields: rt::JsonObject::new(),\n            };\n");
    if shape.fields.is_empty() {
        out.push(
            "            reader.fields(at, |key, reader| answer.other_fields.read_entry(key, reader, at))?;\n",
        );
    } else {
        writeln!(out, "            let mut seen = rt::Seen::<{}>::new();", shape.fields.len().div_ceil(64));
        out.push("            reader.fields(at, |key, reader| match key {\n");
        for (number, field) in shape.fields.iter().enumerate() {
            // A listing's cursor is read as text even when it comes as a number.
            let cursor = cursor_page && field.wire == "cursor" && field.ty == Type::String && !field.list;
            writeln!(
                out,
                "                {} => seen.{}({number}, &mut answer.{}, reader, at, key, &mut answer.other_fields),",
                Lit(&field.wire),
                if cursor { "read_text" } else { "read" },
                field_ident(&field.name),
            );
        }
        out.push("                _ => answer.other_fields.read_entry(key, reader, at),\n            })?;\n");
    }
    write!(
        out,
        "            Ok(answer)
        }}
    }}
    impl rt::ToJson for {name} {{
        fn to_json(&self) -> rt::Json {{
            let mut out = rt::ObjectWriter::new();
"
    );
    for field in &shape.fields {
        writeln!(out, "            out.optional({}, &self.{});", Lit(&field.wire), field_ident(&field.name));
    }
    write!(
        out,
        r#"            out.finish(&self.other_fields)
        }}
    }}
    impl rt::serde::Serialize for {name} {{
        fn serialize<S: rt::serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {{
            rt::serialize_via_json(self, serializer)
        }}
    }}
    impl<'de> rt::serde::Deserialize<'de> for {name} {{
        fn deserialize<D: rt::serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {{
            rt::deserialize_via_json(deserializer)
        }}
    }}
    impl fmt::Debug for {name} {{
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {{
            f.debug_struct({label})
"#,
        label = Lit(name)
    );
    for field in &shape.fields {
        let label = Lit(&field.name);
        if field.secret {
            writeln!(out, "                .field({label}, &rt::Redacted)");
        } else {
            writeln!(out, "                .field({label}, &self.{})", field_ident(&field.name));
        }
    }
    out.push(
        "                .field(\"other_fields\", &self.other_fields.len())
                .finish()
        }
    }
",
    );
}
