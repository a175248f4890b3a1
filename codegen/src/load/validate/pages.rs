//! Listings: `service.pagination` (where a page says where the next one starts, over the
//! format's default keys; a flag read one way, pages counted from 0 or 1, and every key
//! named read by some listing), each listing's style and the parameter it leads on by, and
//! where its answer holds its records.

use super::super::diagnostics::Sink;
use super::super::raw::{RawPageKeys, RawPageStyle};
use crate::model::{AnswerType, Operation, Owned, PageKeys, PageStyle, Param, Shape, Type};
use std::collections::HashSet;

/// `service.pagination` over the format's default.
pub(super) fn page_keys(raw: Option<&RawPageKeys>, sink: &mut Sink) -> PageKeys {
    let mut keys = PageKeys {
        cursor: "cursor".to_owned(),
        next_page: "nextPage".to_owned(),
        current_page: vec!["page".to_owned(), "currentPage".to_owned()],
        has_more: "hasMore".to_owned(),
        last_page: false,
        page: "page".to_owned(),
        total_pages: "totalPages".to_owned(),
        first_page: 1,
        record_id: "id".to_owned(),
    };
    let Some(raw) = raw else { return keys };
    check_page_flag(raw, sink);
    if let Some(last) = &raw.last_page {
        if !is_page_path(last) {
            sink.error(
                "service.pagination.last_page",
                format!("`{last}` is not a path of the page"),
                PAGE_PATH_FIX,
            );
        }
        last.clone_into(&mut keys.has_more);
        keys.last_page = true;
    }
    match raw.first_page {
        Some(first @ (0 | 1)) => keys.first_page = first,
        Some(other) => sink.error(
            "service.pagination.first_page",
            format!("pages counted from {other}"),
            "write 1 where the first page is page 1 (the default), or 0 where it is page 0",
        ),
        None => {}
    }
    for (slot, own, key) in [
        (&mut keys.cursor, &raw.cursor, "cursor"),
        (&mut keys.next_page, &raw.next_page, "next_page"),
        (&mut keys.has_more, &raw.has_more, "has_more"),
        (&mut keys.page, &raw.page, "page"),
        (&mut keys.total_pages, &raw.total_pages, "total_pages"),
        (&mut keys.record_id, &raw.record_id, "record_id"),
    ] {
        if let Some(own) = own {
            if !is_page_path(own) {
                sink.error(
                    &format!("service.pagination.{key}"),
                    format!("`{own}` is not a path of the page"),
                    PAGE_PATH_FIX,
                );
            }
            own.clone_into(slot);
        }
    }
    if keys.record_id.starts_with("$.") {
        sink.error(
            "service.pagination.record_id",
            format!("`{}` starts at the answer; a record's id is a key of each record", keys.record_id),
            "name the key of each record the next page starts after, e.g. `record_id: id`",
        );
    }
    if let Some(own) = &raw.current_page {
        if own.is_empty() {
            sink.error(
                "service.pagination.current_page",
                "no key",
                "list the paths of the page's number, the one the service sends most first",
            );
        }
        for (i, path) in own.iter().enumerate().filter(|(_, path)| !is_page_path(path)) {
            sink.error(
                &format!("service.pagination.current_page[{i}]"),
                format!("`{path}` is not a path of the page"),
                PAGE_PATH_FIX,
            );
        }
        own.clone_into(&mut keys.current_page);
    }
    keys
}

/// The flag a page says more by, read one way: `has_more` (more pages follow) or
/// `last_page` (this page is the last), not both; a `has_more` whose key reads as the
/// other (`last`, `isLast`) is refused with both readings, since read the wrong way every
/// listing stops after its first page or asks for one past its end.
fn check_page_flag(raw: &RawPageKeys, sink: &mut Sink) {
    if let (Some(_), Some(_)) = (&raw.has_more, &raw.last_page) {
        sink.error(
            "service.pagination.last_page",
            "a page says whether more follow by one flag: `has_more` names it too",
            "keep `has_more` where the flag says more pages follow, or `last_page` where it says this page is the last",
        );
        return;
    }
    let Some(more) = &raw.has_more else { return };
    let last_key = more.rsplit('.').next().unwrap_or(more);
    let plain: String =
        last_key.chars().filter(char::is_ascii_alphanumeric).collect::<String>().to_ascii_lowercase();
    if ["last", "islast", "lastpage", "islastpage"].contains(&plain.as_str()) {
        sink.error(
            "service.pagination.has_more",
            format!("`{more}` reads as \"this page is the last\", and `has_more` as \"more pages follow\": read one way for the other, every listing would stop after one page or ask for one past its end"),
            format!("write `last_page: {more}` if the flag is true on the last page, or keep `has_more` if it is true while more follow"),
        );
    }
}

/// What a page's path is: keys joined with `.`, from the page's data, or from the whole
/// answer after `$.`.
const PAGE_PATH_FIX: &str = "write the keys joined with `.`, from the page's data (`cursor`, `meta.page`), \
     or from the whole answer after `$.` (`$.meta.pageCount`)";

/// Whether `path` is keys joined with `.`, after an optional `$.`: none empty, none
/// spaced.
fn is_page_path(path: &str) -> bool {
    let keys = path.strip_prefix("$.").unwrap_or(path);
    keys.split('.').all(|key| !key.is_empty() && key.trim() == key && !key.contains(['[', ']', '$']))
}

/// Every key of `service.pagination` the spec names is read by a listing of its style, or
/// refused: a key no listing reads would pass unnoticed.
pub(super) fn check_page_keys_read(raw: Option<&RawPageKeys>, operations: &[Operation], sink: &mut Sink) {
    let Some(raw) = raw else { return };
    let styles: HashSet<&str> =
        operations.iter().filter_map(|op| op.pagination.as_ref()).map(|s| s.as_str()).collect();
    let named: [(&str, bool, &[&str]); 9] = [
        ("cursor", raw.cursor.is_some(), &["cursor"]),
        ("next_page", raw.next_page.is_some(), &["page"]),
        ("current_page", raw.current_page.is_some(), &["page"]),
        ("has_more", raw.has_more.is_some(), &["page_size", "after"]),
        ("last_page", raw.last_page.is_some(), &["page_size", "after"]),
        ("first_page", raw.first_page.is_some(), &["page_size"]),
        ("page", raw.page.is_some(), &["page_size"]),
        ("total_pages", raw.total_pages.is_some(), &["page_size"]),
        ("record_id", raw.record_id.is_some(), &["after"]),
    ];
    for (key, _, read_by) in
        named.iter().filter(|(_, named, read_by)| *named && !read_by.iter().any(|s| styles.contains(s)))
    {
        let style = read_by.join("` or `");
        sink.error(
            &format!("service.pagination.{key}"),
            format!("no listing pages by `{style}`, so `{key}` is never read"),
            format!("remove `{key}`, or give the listing that reads it `pagination: {}`", read_by[0]),
        );
    }
}

/// A listing's style, with the keys of `service.pagination` it reads its pages by; the
/// parameter that leads on must be there, and optional.
pub(super) fn page_style(
    style: RawPageStyle,
    params: &[Param],
    keys: &PageKeys,
    base: &str,
    sink: &mut Sink,
) -> PageStyle<Owned> {
    // Only the parameter that leads on is needed: a listing whose size the service fixes
    // has no `limit` or `page_size` of its own, and none is invented for it.
    let (style, needed): (PageStyle<Owned>, &[&str]) = match style {
        RawPageStyle::Cursor => (PageStyle::Cursor { next: keys.cursor.clone() }, &["cursor"]),
        RawPageStyle::Page => {
            (PageStyle::Page { next: keys.next_page.clone(), current: keys.current_page.clone() }, &["page"])
        }
        RawPageStyle::PageSize => (
            PageStyle::PageSize {
                more: keys.has_more.clone(),
                last: keys.last_page,
                current: keys.page.clone(),
                total: keys.total_pages.clone(),
                first: keys.first_page,
            },
            &["page"],
        ),
        // The records' key is known once the answer's shape is (`check_listings`).
        RawPageStyle::After => (
            PageStyle::After {
                more: keys.has_more.clone(),
                last: keys.last_page,
                records: String::new(),
                id: keys.record_id.clone(),
            },
            &["cursor"],
        ),
    };
    for name in needed {
        match params.iter().find(|p| p.name == *name) {
            None => sink.error(
                &format!("{base}.pagination"),
                format!("`pagination: {}` needs a `{name}` parameter", style.as_str()),
                format!(
                    "add `{name}` (in: query, type: {})",
                    if *name == "cursor" { "string" } else { "integer" }
                ),
            ),
            Some(p) if p.required && (*name == "cursor" || *name == "page") => sink.error(
                &format!("{base}.params.{name}.required"),
                format!("`{name}` drives the paging and must be optional"),
                "remove `required`; the first page is asked for without it",
            ),
            Some(_) => {}
        }
    }
    style
}

/// A listing's answer is a list (its records), or a shape with exactly one list field (its
/// records): what the generated item stream yields one by one. A listing that pages after
/// its last record learns here where its records are, and its records' shape must have the
/// key it starts after.
pub(super) fn check_listings(operations: &mut [Operation], shapes: &[Shape], sink: &mut Sink) {
    for op in operations.iter_mut().filter(|op| op.pagination.is_some()) {
        let at = format!("operations.{}.response", op.name);
        let (records, item) = match &op.response {
            Some(AnswerType { ty, list: true }) => (String::new(), Some(ty)),
            Some(AnswerType { ty: Type::Shape(name), list: false }) => {
                let Some(shape) = shapes.iter().find(|s| &s.name == name) else { continue };
                let mut lists = shape.fields.iter().filter(|f| f.list);
                match (lists.next(), lists.next()) {
                    (Some(field), None) => (field.wire.clone(), Some(&field.ty)),
                    _ => {
                        let count = shape.fields.iter().filter(|f| f.list).count();
                        sink.error(
                            &at,
                            format!(
                                "the page shape `{}` has {count} list fields; a page has one, its records",
                                shape.name
                            ),
                            "mark the records' field `list: true`, and only that one",
                        );
                        continue;
                    }
                }
            }
            other => {
                // Where the listing is declared, when no answer is.
                let at = if other.is_none() { format!("operations.{}.pagination", op.name) } else { at };
                sink.error(
                    &at,
                    "a listing's answer must be its records or a page that holds them",
                    "name the records' shape with `response_list: true`, or a page's shape whose one list field holds the records",
                );
                continue;
            }
        };
        if let Some(PageStyle::After { records: place, id, .. }) = &mut op.pagination {
            *place = records;
            let record = match item {
                Some(Type::Shape(name)) => shapes.iter().find(|s| &s.name == name),
                _ => None,
            };
            let has_id = record.is_some_and(|shape| {
                let head = id.split('.').next().unwrap_or(id);
                shape.fields.iter().any(|f| f.wire == head)
            });
            if !has_id {
                sink.error(
                    &format!("operations.{}.pagination", op.name),
                    format!("the next page starts after the last record's `{id}`, which its records do not have"),
                    "give the records' shape that key, or name the key they have in `service.pagination.record_id`",
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{assert_refused, small};

    #[test]
    fn a_page_flag_is_read_one_way_and_pages_count_from_0_or_1() {
        let with = |keys: &str| {
            small().replacen(
                "  token_operations:\n",
                &format!("  pagination: {{ {keys} }}\n  token_operations:\n"),
                1,
            )
        };
        // Both flags: one says the other's opposite.
        assert_refused(
            &with("has_more: more, last_page: last"),
            "a page says whether more follow by one flag",
        );
        // A last-page flag named as has_more: both readings named, the fix for each.
        assert_refused(
            &with("has_more: meta.isLast"),
            "`meta.isLast` reads as \"this page is the last\", and `has_more` as \"more pages follow\"",
        );
        assert_refused(
            &with("has_more: last"),
            "write `last_page: last` if the flag is true on the last page",
        );
        assert_refused(&with("first_page: 2"), "service.pagination.first_page: pages counted from 2");
        // Said, and read by no listing of the small spec: refused as never read.
        assert_refused(
            &with("last_page: last"),
            "service.pagination.last_page: no listing pages by `page_size` or `after`",
        );
    }

    #[test]
    fn a_listing_after_its_last_record_needs_records_with_that_key() {
        let listing = "  list_transfers:\n    group: transfers\n    summary: Lists transfers.\n    method: GET\n    path: /v1/transfers\n    response: Listed\n    response_list: true\n    pagination: after\n    params:\n      cursor: { in: query, type: string, wire: starting_after }\n";
        let with = |fields: &str, keys: &str| {
            small()
                .replacen(
                    "\nshapes:\n",
                    &format!("\nshapes:\n  Listed:\n    doc: A listed transfer.\n    fields:\n{fields}"),
                    1,
                )
                .replacen("\noperations:\n", &format!("\noperations:\n{listing}"), 1)
                .replacen("  token_operations:\n", &format!("{keys}  token_operations:\n"), 1)
        };
        let spec = crate::load_str(
            "small.yaml",
            &with("      id: { type: string }\n", "  pagination: { has_more: has_more }\n"),
        );
        let style = spec
            .as_ref()
            .ok()
            .and_then(|s| s.operation("list_transfers"))
            .and_then(|op| op.pagination.clone());
        assert!(
            matches!(&style, Some(crate::model::PageStyle::After { more, records, id, last: false }) if more == "has_more" && records.is_empty() && id == "id"),
            "{style:?} {:?}",
            spec.err().map(|e| e.to_string())
        );
        assert_refused(
            &with("      reference: { type: string }\n", ""),
            "the next page starts after the last record's `id`, which its records do not have",
        );
        // Another key, named: read.
        let own = with("      reference: { type: string }\n", "  pagination: { record_id: reference }\n");
        assert!(crate::load_str("small.yaml", &own).is_ok());
        assert_refused(
            &with("      id: { type: string }\n", "  pagination: { record_id: $.id }\n"),
            "starts at the answer",
        );
    }
}
