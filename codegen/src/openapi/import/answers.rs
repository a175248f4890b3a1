//! An operation's answer drafted: the envelope's data as a shape, a list of one, or exact
//! JSON; and a listing's paging, where its parameters and its page show one the spec can
//! follow.

use super::Importer;
use super::draft::Spec;
use super::draft::{Operation, PageKeys};
use super::infer::{self, Paging};
use crate::model::{Method, ParamLocation};
use crate::openapi::text::escape;
use heck::ToUpperCamelCase;
use serde_json::Value;

/// The parameters a listing leads on by, and its size, by their spec names.
const PAGE: &str = "page";
const CURSOR: &str = "cursor";
const PAGE_SIZE: &str = "page_size";

impl<'a> Importer<'a> {
    /// Its answer: the envelope's data, as a shape, a list of one, or exact JSON.
    pub(super) fn answer(
        &mut self,
        drafted: &mut Operation,
        answer: Option<(&'a Value, String)>,
        spec: &Spec,
    ) {
        let Some((schema, pointer)) = answer else { return };
        let data = match &spec.envelope {
            Some(envelope) => match super::infer::data_of(schema, &pointer, envelope, &mut self.schemas) {
                Some(data) => Some((data, format!("{pointer}/properties/{}", escape(&envelope.data)))),
                None => {
                    drafted.unwrapped = true;
                    Some((schema, pointer.clone()))
                }
            },
            None => Some((schema, pointer.clone())),
        };
        let Some((data, at)) = data else { return };
        if spec.envelope.is_some() && !drafted.unwrapped {
            drafted.outside = self.outside_fields(schema, &pointer, spec);
        }
        let hint = format!("{}Data", drafted.name.to_upper_camel_case());
        let typed = self.schemas.answer_type(data, &hint, &at, 0);
        if typed.is_shape() {
            drafted.response = Some(typed.ty);
            drafted.response_list = typed.list;
        } else if typed.list && typed.ty != "json" {
            drafted.choices.push(format!("its answer's data is a list of {}: exact JSON here", typed.ty));
        }
    }

    /// A listing's paging, where its parameters and answer show one the spec can follow;
    /// the service's page keys are the first listing's, and another listing that reads its
    /// pages at other keys is left as a choice.
    pub(super) fn pages(&mut self, drafted: &mut Operation, pages: &mut PageKeys, set: &mut bool) {
        if drafted.method != Method::Get {
            return;
        }
        let query: Vec<&str> = drafted
            .params
            .iter()
            .filter(|p| p.location == ParamLocation::Query && !p.required)
            .map(|p| p.wire.as_str())
            .collect();
        let fields = self.page_fields(drafted);
        let records = drafted.response_list || self.one_list_field(drafted);
        if !records {
            return;
        }
        let Some(paging) = infer::paging(&query, &fields) else {
            // A parameter that leads on, with a page that does not say where it leads.
            if let Some(wire) = infer::leads_on(&query) {
                drafted.choices.push(format!(
                    "CHOICE pagination: `{wire}` looks like it leads on to the next page, but the page says neither how many pages there are, whether more follow, nor the next cursor; where the vendor's guide shows where it does, write `pagination:` (`page_size`, `page`, `cursor` or `after`), name the parameter `page` or `cursor`, and give `service.pagination` its keys"
                ));
            }
            return;
        };
        let (style, leads, wire, keys, size) = match paging {
            Paging::PageSize { page, size, keys } => ("page_size", PAGE, page, keys, size),
            Paging::Cursor { cursor, keys } => ("cursor", CURSOR, cursor, keys, None),
        };
        let same = !*set || *pages == merge(pages, &keys);
        if !same || drafted.params.iter().any(|p| p.name == leads && p.wire != wire) {
            drafted.choices.push(format!(
                "CHOICE pagination: `{wire}` leads on to the next page, which the page says at other keys than the first listing's; write `pagination: {style}`, rename the parameter `{leads}`, and give `service.pagination` its keys"
            ));
            return;
        }
        *pages = merge(pages, &keys);
        *set = true;
        for param in &mut drafted.params {
            if param.location == ParamLocation::Query && param.wire == wire {
                param.name = leads.to_owned();
                param.ty = if style == "page_size" { "integer" } else { "string" }.to_owned();
                param.values.clear();
                param.max = None;
                param.format = None;
                param.length = None;
            }
        }
        // Its size, where it has one, by the name the format's listings give it.
        if let Some(size) = size
            && !drafted.params.iter().any(|p| p.name == PAGE_SIZE)
            && let Some(param) =
                drafted.params.iter_mut().find(|p| p.location == ParamLocation::Query && p.wire == size)
        {
            param.name = PAGE_SIZE.to_owned();
        }
        drafted.pagination = Some(style);
        self.inferred.push(format!("`{}` pages by `{wire}` (`pagination: {style}`)", drafted.name));
    }

    /// The wire paths of a listing's page: its data's fields (`a.b`), and, after `$.`, the
    /// fields of the whole answer outside its data.
    fn page_fields(&self, drafted: &Operation) -> Vec<String> {
        let mut out = drafted.outside.clone();
        if let Some(shape) = drafted.response.as_ref().filter(|_| !drafted.response_list) {
            self.fields_of(shape, "", 0, &mut out);
        }
        out
    }

    fn fields_of(&self, shape: &str, prefix: &str, depth: usize, out: &mut Vec<String>) {
        let Some(shape) = self.schemas.shapes.iter().find(|s| s.name == shape) else { return };
        for field in &shape.fields {
            let path =
                if prefix.is_empty() { field.wire.clone() } else { format!("{prefix}.{}", field.wire) };
            if !field.list && depth < 2 && field.ty.starts_with(|c: char| c.is_ascii_uppercase()) {
                self.fields_of(&field.ty, &path, depth + 1, out);
            }
            out.push(path);
        }
    }

    /// The wire paths of an answer's fields outside its envelope's data, after `$.`, two
    /// levels deep (`$.meta.pageCount`).
    fn outside_fields(&mut self, schema: &'a Value, pointer: &str, spec: &Spec) -> Vec<String> {
        let data = spec.envelope.as_ref().map_or("", |e| e.data.as_str());
        let mut out = Vec::new();
        let mut level = vec![(self.schemas.resolve(schema, pointer), "$".to_owned())];
        for _ in 0..2 {
            let mut next = Vec::new();
            for (schema, prefix) in level {
                for (name, sub) in self.schemas.members(schema, pointer).properties {
                    if prefix == "$" && name == data {
                        continue;
                    }
                    let path = format!("{prefix}.{name}");
                    out.push(path.clone());
                    next.push((self.schemas.resolve(sub, pointer), path));
                }
            }
            level = next;
        }
        out
    }

    /// Whether the answer's shape has exactly one list field: the records of its page.
    fn one_list_field(&self, drafted: &Operation) -> bool {
        let Some(shape) = drafted.response.as_ref() else { return false };
        self.schemas
            .shapes
            .iter()
            .find(|s| &s.name == shape)
            .is_some_and(|s| s.fields.iter().filter(|f| f.list).count() == 1)
    }
}

/// `keys` over what is set already.
fn merge(pages: &PageKeys, keys: &PageKeys) -> PageKeys {
    PageKeys {
        cursor: keys.cursor.clone().or_else(|| pages.cursor.clone()),
        has_more: keys.has_more.clone().or_else(|| pages.has_more.clone()),
        page: keys.page.clone().or_else(|| pages.page.clone()),
        total_pages: keys.total_pages.clone().or_else(|| pages.total_pages.clone()),
    }
}
