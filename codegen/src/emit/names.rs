//! Names and gates chosen once for a whole spec, and the small naming helpers every
//! emitter shares: a leaf of `emit`, importing nothing of its siblings but `code`.

use super::code;
use crate::model::{AnswerType, Field, Operation, PageItems, Param, Spec, Type};
use heck::{ToShoutySnakeCase, ToUpperCamelCase};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// Which cargo features gate which items, when each group has one.
pub(super) struct Gates {
    per_group: bool,
    /// The groups that reach each shape (through an answer, directly or nested).
    shapes: HashMap<String, BTreeSet<String>>,
    /// The groups that use each enum (a parameter's or an answer field's).
    enums: HashMap<String, BTreeSet<String>>,
}

impl Gates {
    pub(super) fn new(spec: &Spec, names: &Names, per_group: bool) -> Gates {
        let mut shapes: HashMap<String, BTreeSet<String>> = HashMap::new();
        let mut enums: HashMap<String, BTreeSet<String>> = HashMap::new();
        if !per_group {
            return Gates { per_group, shapes, enums };
        }
        for op in &spec.operations {
            let mut pending: Vec<&str> = match op.response.as_ref().map(|r| &r.ty) {
                Some(Type::Shape(name)) => vec![name.as_str()],
                _ => Vec::new(),
            };
            // Nested shapes, each once per operation (a shape may hold itself in a list).
            let mut seen = BTreeSet::new();
            while let Some(name) = pending.pop() {
                if !seen.insert(name) {
                    continue;
                }
                shapes.entry(name.to_owned()).or_default().insert(op.group.clone());
                let Some(shape) = spec.shapes.iter().find(|s| s.name == name) else { continue };
                for field in &shape.fields {
                    if let Type::Shape(inner) = &field.ty {
                        pending.push(inner);
                    }
                }
            }
            for param in &op.params {
                if let Some(def) = names.enum_of(param) {
                    enums.entry(def.name.clone()).or_default().insert(op.group.clone());
                }
            }
        }
        // Webhook payloads are always there (webhooks have no group): so are their shapes,
        // nested ones too, whatever operations also use them.
        let mut pending: Vec<&str> =
            spec.webhooks.iter().flat_map(|w| &w.payloads).map(|p| p.shape.as_str()).collect();
        let mut always = BTreeSet::new();
        while let Some(name) = pending.pop() {
            if !always.insert(name) {
                continue;
            }
            shapes.remove(name);
            let Some(shape) = spec.shapes.iter().find(|s| s.name == name) else { continue };
            pending.extend(shape.fields.iter().filter_map(|field| match &field.ty {
                Type::Shape(inner) => Some(inner.as_str()),
                _ => None,
            }));
        }
        for ((shape, _), name) in &names.field_enums {
            let groups = shapes.get(shape).cloned().unwrap_or_default();
            enums.entry(name.clone()).or_default().extend(groups);
        }
        // The enums of those shapes' fields are ungated with them.
        for ((shape, _), name) in &names.field_enums {
            if always.contains(shape.as_str()) {
                enums.remove(name);
            }
        }
        Gates { per_group, shapes, enums }
    }

    /// The attribute of items used by `groups`: none without per-group features, or when
    /// nothing (or every group) uses them.
    pub(super) fn attr<'g>(&self, groups: impl IntoIterator<Item = &'g String>) -> Option<String> {
        self.cfg(groups, "any")
    }

    /// The attribute of items that need every one of `groups` (a method of one group that
    /// calls another group's operations): none without per-group features or groups.
    pub(super) fn all<'g>(&self, groups: impl IntoIterator<Item = &'g String>) -> Option<String> {
        self.cfg(groups, "all")
    }

    /// `#[cfg(feature = "g")]`, or `#[cfg(<combine>(feature = ..., ...))]` for several.
    pub(super) fn cfg<'g>(
        &self,
        groups: impl IntoIterator<Item = &'g String>,
        combine: &str,
    ) -> Option<String> {
        if !self.per_group {
            return None;
        }
        let features: Vec<String> =
            groups.into_iter().map(|g| format!("feature = {}", code::Lit(g))).collect();
        match features.len() {
            0 => None,
            1 => Some(format!("#[cfg({})]", features[0])),
            _ => Some(format!("#[cfg({combine}({}))]", features.join(", "))),
        }
    }

    /// The attribute of one group's items.
    pub(super) fn group(&self, group: &String) -> Option<String> {
        self.attr([group])
    }

    /// The attribute of a shape's struct and decoder.
    pub(super) fn shape(&self, name: &str) -> Option<String> {
        self.attr(self.shapes.get(name).into_iter().flatten())
    }

    /// The attribute of an enum.
    pub(super) fn enumeration(&self, name: &str) -> Option<String> {
        self.attr(self.enums.get(name).into_iter().flatten())
    }
}

const KEYWORDS: [&str; 51] = [
    "as", "break", "const", "continue", "else", "enum", "extern", "false", "fn", "for", "if", "impl", "in",
    "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return", "static", "struct", "trait",
    "true", "type", "unsafe", "use", "where", "while", "async", "await", "dyn", "abstract", "become", "box",
    "do", "final", "macro", "override", "priv", "typeof", "unsized", "virtual", "yield", "try", "gen",
    "union", "raw", "safe",
];

/// Whether `name` must be written as a raw identifier (`r#type`) in Rust.
pub(super) fn is_keyword(name: &str) -> bool {
    KEYWORDS.contains(&name)
}

/// An identifier for a field or method, escaped when it is a keyword (`r#type`).
pub(super) fn field_ident(name: &str) -> String {
    if is_keyword(name) { format!("r#{name}") } else { name.to_owned() }
}

/// Type names chosen once for the whole spec.
pub(super) struct Names {
    /// Param name -> enum, for params with `values`.
    enums: BTreeMap<String, EnumDef>,
    /// (shape, field) -> enum name, for answer fields with `values`.
    pub(super) field_enums: BTreeMap<(String, String), String>,
    /// The enums of answer fields that no parameter enum already covers.
    answer_enums: Vec<EnumDef>,
}

/// A field of a shape: (shape name, field name).
type FieldRef<'a> = (&'a str, &'a str);

pub(super) struct EnumDef {
    pub(super) name: String,
    pub(super) values: Vec<String>,
}

impl Names {
    pub(super) fn new(spec: &Spec) -> Names {
        let mut taken: Vec<String> = spec
            .identifiers
            .iter()
            .map(|i| i.name.clone())
            .chain(spec.shapes.iter().map(|s| s.name.clone()))
            .chain(crate::model::RESERVED_TYPE_NAMES.iter().map(|n| (*n).to_owned()))
            .collect();
        let mut enums: BTreeMap<String, EnumDef> = BTreeMap::new();
        for param in spec.operations.iter().flat_map(|op| &op.params) {
            if param.values.is_empty() || param.fixed.is_some() {
                continue;
            }
            let entry = enums.entry(param.name.clone()).or_insert_with(|| {
                let mut name = param.name.to_upper_camel_case();
                if taken.contains(&name) {
                    name.push_str("Value");
                }
                EnumDef { name, values: Vec::new() }
            });
            for value in &param.values {
                if !entry.values.contains(value) {
                    entry.values.push(value.clone());
                }
            }
        }
        taken.extend(enums.values().map(|e| e.name.clone()));
        // An answer field reuses a parameter's enum with the same values; fields that share
        // another set of values share one enum, named after the shortest of their
        // `{Shape}{Field}` names (the plainest record that uses it).
        let mut sets: Vec<(&[String], Vec<FieldRef<'_>>)> = Vec::new();
        for shape in &spec.shapes {
            for field in shape.fields.iter().filter(|f| !f.values.is_empty()) {
                match sets.iter_mut().find(|(values, _)| *values == field.values.as_slice()) {
                    Some((_, users)) => users.push((&shape.name, &field.name)),
                    None => sets.push((&field.values, vec![(&shape.name, &field.name)])),
                }
            }
        }
        let mut field_enums = BTreeMap::new();
        let mut answer_enums: Vec<EnumDef> = Vec::new();
        for (values, users) in sets {
            let name = match enums.values().find(|e| e.values == values) {
                Some(existing) => existing.name.clone(),
                None => {
                    let base = users
                        .iter()
                        .map(|(shape, field)| format!("{shape}{}", field.to_upper_camel_case()))
                        .min_by(|a, b| a.len().cmp(&b.len()).then_with(|| a.cmp(b)))
                        .unwrap_or_default();
                    let mut name = base.clone();
                    let mut n = 2;
                    while taken.contains(&name) {
                        name = format!("{base}{n}");
                        n += 1;
                    }
                    taken.push(name.clone());
                    answer_enums.push(EnumDef { name: name.clone(), values: values.to_vec() });
                    name
                }
            };
            for (shape, field) in users {
                field_enums.insert((shape.to_owned(), field.to_owned()), name.clone());
            }
        }
        Names { enums, field_enums, answer_enums }
    }

    /// Every enum to generate, parameters' first.
    pub(super) fn all_enums(&self) -> impl Iterator<Item = &EnumDef> {
        self.enums.values().chain(self.answer_enums.iter())
    }

    /// The enum a parameter's values make and its first variant, if it has values.
    pub(super) fn first_variant(&self, param: &Param) -> Option<(String, String)> {
        let def = self.enum_of(param)?;
        let variant = variant_names(&def.values).into_iter().next()?;
        Some((def.name.clone(), variant))
    }

    pub(super) fn enum_of(&self, param: &Param) -> Option<&EnumDef> {
        if param.values.is_empty() || param.fixed.is_some() {
            return None;
        }
        self.enums.get(&param.name)
    }

    /// The Rust type of one value of an answer field (not wrapped in `Vec` or `Option`), as
    /// seen from the module `types_path` names.
    pub(super) fn field_item_type(&self, shape: &str, field: &Field, types_path: &str) -> String {
        if let Some(name) = self.field_enums.get(&(shape.to_owned(), field.name.clone())) {
            return format!("{types_path}::{name}");
        }
        if field.secret && matches!(field.ty, Type::String | Type::DateTime) {
            return "rt::Secret".to_owned();
        }
        answer_type(&field.ty, types_path)
    }

    /// The Rust type of an answer field as its struct holds it.
    pub(super) fn field_type(&self, shape: &str, field: &Field) -> String {
        // Every answer field is an `Option`, `required` or not: the service omits
        // fields its document promises (spec/FORMAT.md, "Answers").
        let item = self.field_item_type(shape, field, "self");
        if field.list { format!("Option<Vec<{item}>>") } else { format!("Option<{item}>") }
    }

    /// The Rust type of a parameter's value (not wrapped in `Option`).
    pub(super) fn value_type(&self, param: &Param) -> String {
        if let Some(def) = self.enum_of(param) {
            return format!("super::types::{}", def.name);
        }
        if is_secret_text(param) {
            return "rt::Secret".to_owned();
        }
        match param.ty {
            Type::DateTime => "rt::DateTime".to_owned(),
            // Short text without an allocation.
            Type::String => "rt::Text".to_owned(),
            _ => rust_type(&param.ty, "super::types"),
        }
    }
}

/// The Rust type of a parameter.
fn rust_type(ty: &Type, types_path: &str) -> String {
    match ty {
        Type::String | Type::DateTime => "String".to_owned(),
        Type::Integer => "i64".to_owned(),
        Type::Boolean => "bool".to_owned(),
        Type::Decimal => "rt::Amount".to_owned(),
        Type::Json => "rt::serde_json::Value".to_owned(),
        Type::StringList => "Vec<String>".to_owned(),
        Type::Identifier(name) | Type::Shape(name) => format!("{types_path}::{name}"),
    }
}

/// The Rust type of one answer value: exact amounts, timestamps, exact JSON.
fn answer_type(ty: &Type, types_path: &str) -> String {
    match ty {
        Type::DateTime => "rt::Timestamp".to_owned(),
        Type::Json => "rt::Json".to_owned(),
        other => rust_type(other, types_path),
    }
}

/// The type of one record of a listing (`item`), and how a page's data (`page`) becomes
/// its records (`take`), as seen from the module `types_path` names.
pub(super) fn page_item(items: PageItems<'_>, names: &Names, types_path: &str) -> (String, String) {
    match items {
        PageItems::Field(shape, field) => {
            let ident = field_ident(&field.name);
            let take = if field.required {
                format!("page.{ident}")
            } else {
                format!("page.{ident}.unwrap_or_default()")
            };
            (names.field_item_type(&shape.name, field, types_path), take)
        }
        PageItems::Data(ty) => (answer_type(ty, types_path), "page".to_owned()),
    }
}

/// The type an operation's answer data decodes to, as seen from the module `types_path`
/// names (`super::types` from the requests and groups).
pub(super) fn data_type(op: &Operation, types_path: &str) -> String {
    match &op.response {
        None => "rt::Json".to_owned(),
        Some(AnswerType { ty, list: false }) => answer_type(ty, types_path),
        Some(AnswerType { ty, list: true }) => format!("Vec<{}>", answer_type(ty, types_path)),
    }
}

/// A secret held as text (PIN, OTP, token): typed `Secret`, whose `Debug` hides it.
pub(super) fn is_secret_text(param: &Param) -> bool {
    param.secret && param.values.is_empty() && matches!(param.ty, Type::String | Type::DateTime)
}

/// Whether a constructor or setter takes `impl Into<T>` rather than `T`.
pub(super) fn takes_into(param: &Param, names: &Names) -> bool {
    names.enum_of(param).is_none()
        && (matches!(param.ty, Type::String | Type::Identifier(_)) || is_secret_text(param))
}

pub(super) fn route_const(op: &Operation) -> String {
    op.name.to_shouty_snake_case()
}

pub(super) fn request_type(op: &Operation) -> String {
    op.name.to_upper_camel_case()
}

/// UpperCamelCase variant names for wire values, unique within the enum.
pub(super) fn variant_names(values: &[String]) -> Vec<String> {
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
            name
        })
        .collect()
}
