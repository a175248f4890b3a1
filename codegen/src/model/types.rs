//! The `identifiers` and `shapes` sections, and the types of parameters and fields.

/// Type names the generated code uses unqualified: a spec type with one of these names
/// would hide it, so the loader refuses it and the emitter never picks one.
pub const RESERVED_TYPE_NAMES: [&str; 24] = [
    "Self",
    "String",
    "Option",
    "Some",
    "None",
    "Vec",
    "Result",
    "Ok",
    "Err",
    "Box",
    "Default",
    "From",
    "Into",
    "Clone",
    "Copy",
    "Debug",
    "PartialEq",
    "Eq",
    "Hash",
    "Send",
    "Sync",
    "Sized",
    "ToString",
    "Iterator",
];

/// A typed identifier.
#[derive(Debug, Clone)]
pub struct Identifier {
    /// UpperCamelCase name (`SubAccountId`).
    pub name: String,
    /// What it identifies.
    pub doc: String,
}

/// A declared shape of an answer's `data`.
#[derive(Debug, Clone)]
pub struct Shape {
    /// UpperCamelCase name.
    pub name: String,
    /// Doc lines.
    pub doc: Vec<String>,
    /// Fields in file order.
    pub fields: Vec<Field>,
}

/// A field of a shape.
#[derive(Debug, Clone)]
pub struct Field {
    /// snake_case Rust name.
    pub name: String,
    /// The JSON key.
    pub wire: String,
    /// Its type, or the type of each item when `list`.
    pub ty: Type,
    /// Whether it is a list.
    pub list: bool,
    /// The reference's allowed values, if it lists them (an open enumeration).
    pub values: Vec<String>,
    /// Whether the answer always carries it (present and not null).
    pub required: bool,
    /// Whether it must never be shown.
    pub secret: bool,
    /// A decimal the service writes as text (`"1500.50"`) rather than as a JSON number: the
    /// sandbox writes it so (the client reads either).
    pub as_string: bool,
    /// Doc lines.
    pub doc: Vec<String>,
}

/// The type of a parameter or field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Type {
    /// Text.
    String,
    /// A whole number.
    Integer,
    /// true or false.
    Boolean,
    /// An exact amount.
    Decimal,
    /// An ISO-8601 instant or date, as text.
    DateTime,
    /// Any JSON value.
    Json,
    /// A list of strings.
    StringList,
    /// A typed identifier declared under `identifiers`.
    Identifier(String),
    /// A shape declared under `shapes` (answers only).
    Shape(String),
}

impl Type {
    /// The built-in type names.
    pub const BUILTIN: [&'static str; 7] =
        ["string", "integer", "boolean", "decimal", "date_time", "json", "string_list"];

    /// Reads a built-in type name.
    pub fn builtin(name: &str) -> Option<Type> {
        Some(match name {
            "string" => Type::String,
            "integer" => Type::Integer,
            "boolean" => Type::Boolean,
            "decimal" => Type::Decimal,
            "date_time" => Type::DateTime,
            "json" => Type::Json,
            "string_list" => Type::StringList,
            _ => return None,
        })
    }

    /// The spec's word for it.
    pub fn name(&self) -> &str {
        match self {
            Type::String => "string",
            Type::Integer => "integer",
            Type::Boolean => "boolean",
            Type::Decimal => "decimal",
            Type::DateTime => "date_time",
            Type::Json => "json",
            Type::StringList => "string_list",
            Type::Identifier(name) | Type::Shape(name) => name,
        }
    }
}
