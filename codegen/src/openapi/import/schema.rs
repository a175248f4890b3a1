//! A document's schemas in the spec's types: an answer's schema as a shape (each object
//! once, named by its component or its place), a list of one, or a built-in type; a request
//! body's as dotted parameters; a parameter's as its type, values and bounds.

use super::draft::{Field, Shape};
use super::names::{Taken, field, upper_camel};
use crate::openapi::document::{WireType, wire_type};
use crate::openapi::refs::{reference_name, resolve};
use serde_json::Value;
use std::collections::{HashMap, HashSet};

/// How deep a schema is followed (objects in objects, lists of lists); below it a value is
/// `json`, exact JSON, so a schema that holds itself is read in bounded time.
pub(super) const MAX_DEPTH: usize = 12;
/// The most fields (of every shape) and parameters a document may expand to; past it the
/// rest are `json` and said.
pub(super) const MAX_EXPANDED: usize = 200_000;
/// The most fields of one shape, or parameters of one operation (the loader's limit).
pub(super) const MAX_MEMBERS: usize = crate::load::MAX_MEMBERS;
/// What a reference that leads nowhere reads as.
static NULL: Value = Value::Null;
/// How many `allOf`/`oneOf`/`anyOf` levels are merged into one object.
const MAX_MERGE: usize = 16;

/// A value's type in the spec: a type word or a shape's name, whether it is a list of
/// that, and the values a string takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Typed {
    pub ty: String,
    pub list: bool,
    pub values: Vec<String>,
}

impl Typed {
    fn word(ty: &str) -> Self {
        Typed { ty: ty.to_owned(), list: false, values: Vec::new() }
    }

    /// Whether it names a shape (not a built-in type word).
    pub(super) fn is_shape(&self) -> bool {
        self.ty.starts_with(|c: char| c.is_ascii_uppercase())
    }
}

/// A parameter's type: a type word with what the document bounds it by.
#[derive(Debug, Clone, Default)]
pub(super) struct ParamType {
    pub ty: &'static str,
    pub values: Vec<String>,
    pub max: Option<i64>,
    pub format: Option<&'static str>,
    pub length: Option<u64>,
    pub layout: Option<&'static str>,
}

/// One body field, flattened: its dotted wire key, type, whether required, and its doc.
pub(super) struct BodyField {
    pub wire: String,
    pub ty: ParamType,
    pub required: bool,
    pub doc: Option<String>,
}

/// An object's members: its properties (those of `allOf`, `oneOf` and `anyOf` members
/// merged, the first of a name kept) and the names it requires (of itself and `allOf`).
#[derive(Default)]
pub(super) struct Members<'a> {
    pub properties: Vec<(&'a str, &'a Value)>,
    pub required: HashSet<&'a str>,
}

/// The shapes drafted so far, and what could not be typed.
pub(super) struct Schemas<'a> {
    root: &'a Value,
    pub shapes: Vec<Shape>,
    names: Taken,
    /// A schema's key (its reference, or its place) -> its shape's name.
    by_key: HashMap<String, String>,
    budget: usize,
    /// What was read as `json` for want of a word: its place and why.
    pub notes: Vec<(String, String)>,
}

impl<'a> Schemas<'a> {
    pub(super) fn new(root: &'a Value) -> Self {
        Schemas {
            root,
            shapes: Vec::new(),
            names: Taken::default(),
            by_key: HashMap::new(),
            budget: MAX_EXPANDED,
            notes: Vec::new(),
        }
    }

    /// `value` followed through its `$ref`s; a reference that leads nowhere is said and
    /// read as an empty schema (exact JSON).
    pub(super) fn resolve(&mut self, value: &'a Value, pointer: &str) -> &'a Value {
        match resolve(self.root, value) {
            Ok(found) => found,
            Err(error) => {
                self.notes.push((pointer.to_owned(), format!("{}; read as exact JSON", error.message)));
                &NULL
            }
        }
    }

    /// Spends one of the document's budget of fields; `false` once it is spent (said once).
    fn spend(&mut self, pointer: &str) -> bool {
        match self.budget.checked_sub(1) {
            Some(left) => {
                self.budget = left;
                true
            }
            None => {
                if self.budget == 0 {
                    self.notes.push((
                        pointer.to_owned(),
                        format!(
                            "the document expands to more than {MAX_EXPANDED} fields; the rest are exact JSON"
                        ),
                    ));
                    // Said once: the budget is now past its end.
                    self.budget = usize::MAX;
                }
                false
            }
        }
    }

    /// An object schema's members, its compositions merged.
    pub(super) fn members(&mut self, schema: &'a Value, pointer: &str) -> Members<'a> {
        let mut found = Members::default();
        let mut names: HashSet<&'a str> = HashSet::new();
        // Each schema merged once: one that names itself (`allOf: [A, A]` in `A`) adds nothing
        // and is not followed again, so a level holds at most the document's schemas.
        let mut merged: HashSet<*const Value> = HashSet::new();
        let mut level = vec![(schema, true)];
        for _ in 0..MAX_MERGE {
            let mut next = Vec::new();
            for (schema, all) in level {
                if !merged.insert(std::ptr::from_ref(schema)) {
                    continue;
                }
                if let Some(Value::Object(properties)) = schema.get("properties") {
                    for (name, sub) in properties {
                        if names.insert(name.as_str()) {
                            found.properties.push((name.as_str(), sub));
                        }
                    }
                }
                if all && let Some(Value::Array(required)) = schema.get("required") {
                    found.required.extend(required.iter().filter_map(Value::as_str));
                }
                for (key, all) in [("allOf", all), ("oneOf", false), ("anyOf", false)] {
                    if let Some(Value::Array(members)) = schema.get(key) {
                        for member in members {
                            next.push((self.resolve(member, pointer), all));
                        }
                    }
                }
            }
            if next.is_empty() {
                return found;
            }
            level = next;
        }
        self.notes.push((
            pointer.to_owned(),
            format!("compositions nest deeper than {MAX_MERGE} levels; the rest are left out"),
        ));
        found
    }

    /// The wire type of a schema, its compositions looked into when it has no `type`.
    fn kind(&mut self, schema: &'a Value, pointer: &str) -> WireType {
        let ty = wire_type(schema);
        if ty != WireType::Any {
            return ty;
        }
        for key in ["allOf", "oneOf", "anyOf"] {
            if let Some(Value::Array(members)) = schema.get(key) {
                let kinds: Vec<WireType> = members
                    .iter()
                    .map(|m| {
                        let m = self.resolve(m, pointer);
                        wire_type(m)
                    })
                    .collect();
                if !kinds.is_empty() && kinds.iter().all(|k| *k == WireType::Object) {
                    return WireType::Object;
                }
                if let [one] = kinds.as_slice() {
                    return *one;
                }
            }
        }
        ty
    }

    /// An answer value's type: a shape for an object with members, a list of its items'
    /// type for an array, a type word otherwise.
    pub(super) fn answer_type(
        &mut self,
        schema: &'a Value,
        hint: &str,
        pointer: &str,
        depth: usize,
    ) -> Typed {
        let name = reference_name(schema).map(str::to_owned);
        let key =
            schema.get("$ref").and_then(Value::as_str).map_or_else(|| pointer.to_owned(), str::to_owned);
        let schema = self.resolve(schema, pointer);
        if depth >= MAX_DEPTH {
            return Typed::word("json");
        }
        match self.kind(schema, pointer) {
            WireType::Array => {
                let Some(items) = schema.get("items") else { return Typed::word("json") };
                let item =
                    self.answer_type(items, &format!("{hint}Item"), &format!("{pointer}/items"), depth + 1);
                if item.list {
                    // A list of lists has no word but exact JSON.
                    return Typed::word("json");
                }
                Typed { list: true, ..item }
            }
            WireType::Object => {
                let members = self.members(schema, pointer);
                if members.properties.is_empty() {
                    return Typed::word("json");
                }
                let shape = self.shape(schema, name.as_deref().unwrap_or(hint), &key, pointer, depth);
                Typed::word(&shape)
            }
            WireType::String => {
                let mut typed = Typed::word(string_word(schema));
                if typed.ty == "string" {
                    typed.values = enumeration(schema);
                }
                typed
            }
            WireType::Integer => Typed::word("integer"),
            WireType::Number | WireType::NumberOrString => Typed::word("decimal"),
            WireType::Boolean => Typed::word("boolean"),
            WireType::Any => Typed::word("json"),
        }
    }

    /// The shape of an object schema, drafted once per schema (by its reference, or its
    /// place when it is written inline).
    fn shape(&mut self, schema: &'a Value, hint: &str, key: &str, pointer: &str, depth: usize) -> String {
        if let Some(name) = self.by_key.get(key) {
            return name.clone();
        }
        let name = self.names.take_with(upper_camel(hint), "");
        self.by_key.insert(key.to_owned(), name.clone());
        let index = self.shapes.len();
        // Where it stands in the document: its component, else its place.
        let place = if key.starts_with("#/") { key } else { pointer };
        let doc = one_line(schema.get("description").and_then(Value::as_str))
            .unwrap_or_else(|| format!("`{place}` of the document."));
        self.shapes.push(Shape { name: name.clone(), doc, fields: Vec::new() });
        let members = self.members(schema, pointer);
        let mut taken = Taken::default();
        let mut wires = HashSet::new();
        let mut fields = Vec::new();
        for (wire, sub) in members.properties {
            if fields.len() >= MAX_MEMBERS {
                self.notes.push((
                    format!("{pointer}/properties"),
                    format!("shape `{name}` has more than {MAX_MEMBERS} fields; the rest are kept in its `other_fields`"),
                ));
                break;
            }
            if !wires.insert(wire) || !self.spend(pointer) {
                continue;
            }
            let at = format!("{pointer}/properties/{}", crate::openapi::text::escape(wire));
            let sub_hint = format!("{name}{}", upper_camel(wire));
            let typed = self.answer_type(sub, &sub_hint, &at, depth + 1);
            let sub = self.resolve(sub, &at);
            fields.push(Field {
                name: taken.take(field(wire)),
                wire: wire.to_owned(),
                ty: typed.ty,
                list: typed.list,
                values: typed.values,
                required: members.required.contains(wire),
                doc: one_line(sub.get("description").and_then(Value::as_str)),
            });
        }
        self.shapes[index].fields = fields;
        name
    }

    /// A parameter's type from its schema: a type word (an object or a list of anything but
    /// text is exact JSON), its values and bounds.
    pub(super) fn param_type(&mut self, schema: &'a Value, pointer: &str) -> ParamType {
        let schema = self.resolve(schema, pointer);
        let mut out = ParamType::default();
        out.ty = match self.kind(schema, pointer) {
            WireType::String => {
                out.values = enumeration(schema);
                out.format = match schema.get("format").and_then(Value::as_str) {
                    Some("email") => Some("email"),
                    _ => None,
                };
                let (least, most) = (
                    schema.get("minLength").and_then(Value::as_u64),
                    schema.get("maxLength").and_then(Value::as_u64),
                );
                if least.is_some() && least == most && out.values.is_empty() {
                    out.length = least;
                }
                let word = string_word(schema);
                if word == "date_time" {
                    out.values.clear();
                    out.format = None;
                    out.length = None;
                    out.layout = Some(match schema.get("format").and_then(Value::as_str) {
                        Some("date") => "YYYY-MM-DD",
                        _ => "YYYY-MM-DDThh:mm:ss.sssZ",
                    });
                }
                word
            }
            WireType::Integer => {
                out.max = schema.get("maximum").and_then(Value::as_i64);
                "integer"
            }
            WireType::Number | WireType::NumberOrString => "decimal",
            WireType::Boolean => "boolean",
            WireType::Array => {
                let items = schema.get("items").map(|items| self.resolve(items, pointer));
                if items.is_some_and(|items| wire_type(items) == WireType::String) {
                    "string_list"
                } else {
                    "json"
                }
            }
            WireType::Object | WireType::Any => "json",
        };
        out
    }

    /// A request body's fields, flattened: an object's members by dotted wire keys
    /// (`order.amount`), each required where it and every object above it are.
    pub(super) fn body_fields(
        &mut self,
        schema: &'a Value,
        key: &str,
        required: bool,
        pointer: &str,
        depth: usize,
        out: &mut Vec<BodyField>,
    ) {
        // Each object and field walked spends the budget, and an operation holds at most one
        // field past its limit (which is said): a schema whose objects hold themselves ends.
        if out.len() > MAX_MEMBERS || !self.spend(pointer) {
            return;
        }
        let schema = self.resolve(schema, pointer);
        let doc = one_line(schema.get("description").and_then(Value::as_str));
        if self.kind(schema, pointer) == WireType::Object && depth < MAX_DEPTH {
            let members = self.members(schema, pointer);
            if !members.properties.is_empty() {
                for (name, sub) in members.properties {
                    let sub_key = if key.is_empty() { name.to_owned() } else { format!("{key}.{name}") };
                    let at = format!("{pointer}/properties/{}", crate::openapi::text::escape(name));
                    let sub_required = required && members.required.contains(name);
                    self.body_fields(sub, &sub_key, sub_required, &at, depth + 1, out);
                }
                return;
            }
        }
        if key.is_empty() {
            return;
        }
        let ty = self.param_type(schema, pointer);
        out.push(BodyField { wire: key.to_owned(), ty, required, doc });
    }

    /// Breaks each shape that would hold itself other than through a list: the field that
    /// closes the circle becomes exact JSON, and is said.
    pub(super) fn break_cycles(&mut self) {
        let index: HashMap<String, usize> =
            self.shapes.iter().enumerate().map(|(i, s)| (s.name.clone(), i)).collect();
        for start in 0..self.shapes.len() {
            // Depth-first over fields that are not lists, from `start`; a field that leads
            // back to a shape on the path closes a circle.
            let mut path = vec![start];
            let mut cursor = vec![0usize];
            let mut done: HashSet<usize> = HashSet::new();
            while let (Some(&shape), Some(next)) = (path.last(), cursor.last_mut()) {
                let fields = &self.shapes[shape].fields;
                let Some(at) =
                    (*next..fields.len()).find(|&i| !fields[i].list && index.contains_key(&fields[i].ty))
                else {
                    done.insert(shape);
                    path.pop();
                    cursor.pop();
                    continue;
                };
                *next = at + 1;
                let target = index[&fields[at].ty];
                if path.contains(&target) {
                    let (owner, field) = (self.shapes[shape].name.clone(), fields[at].name.clone());
                    let broken = &mut self.shapes[shape].fields[at];
                    broken.ty = "json".to_owned();
                    self.notes.push((
                        format!("shape {owner}"),
                        format!("`{owner}.{field}` would make the shape hold itself; it is exact JSON"),
                    ));
                } else if !done.contains(&target) {
                    path.push(target);
                    cursor.push(0);
                }
            }
        }
    }
}

/// A string schema's type word: `date_time` for a date or an instant, else `string`.
fn string_word(schema: &Value) -> &'static str {
    match schema.get("format").and_then(Value::as_str) {
        Some("date-time" | "date") => "date_time",
        _ => "string",
    }
}

/// A schema's text values, each once (`null` and values that are not text left out).
fn enumeration(schema: &Value) -> Vec<String> {
    let mut values: Vec<String> = Vec::new();
    if let Some(Value::Array(listed)) = schema.get("enum") {
        for value in listed.iter().filter_map(Value::as_str) {
            if !values.iter().any(|v| v == value) {
                values.push(value.to_owned());
            }
        }
    }
    values
}

/// A description on one line: whitespace and control characters as single spaces, at most
/// 600 characters (cut at a word, with `...`); `None` when empty.
pub(super) fn one_line(text: Option<&str>) -> Option<String> {
    const MOST: usize = 600;
    let words: Vec<&str> =
        text?.split(|c: char| c.is_whitespace() || c.is_control()).filter(|w| !w.is_empty()).collect();
    let mut line = String::new();
    for word in words {
        if line.len() + word.len() + 1 > MOST {
            line.push_str(" ...");
            break;
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    (!line.is_empty()).then_some(line)
}
