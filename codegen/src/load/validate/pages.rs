//! `service.pagination`: where a page says where the next one starts, over the format's
//! default keys; a flag read one way, pages counted from 0 or 1, and every key named read
//! by some listing.

use super::common::*;

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
