//! The conventions a spec needs and a document does not name, drafted from what the
//! document shows: an envelope every answer shares, a listing's page pair or cursor, and
//! an idempotency header. Each is inferred only from keys a document spells as such
//! services do; what is not shown is left to the author as a choice.

use super::draft::{Envelope, PageKeys};
use super::schema::Schemas;
use serde_json::Value;

/// The keys an envelope's data is found under.
const DATA_KEYS: [&str; 4] = ["data", "responseBody", "result", "payload"];
/// The keys of an envelope's code.
const CODE_KEYS: [&str; 4] = ["code", "responseCode", "statusCode", "status_code"];
/// The keys of an envelope's description.
const DESCRIPTION_KEYS: [&str; 5] = ["description", "message", "responseMessage", "msg", "detail"];
/// The keys of an envelope's true/false flag.
const FLAG_KEYS: [&str; 3] = ["status", "success", "requestSuccessful"];
/// How many of the answers must share an envelope for it to be the service's (in 100ths).
const SHARED_PERCENT: usize = 80;

/// A listing's page-number parameter, and its page-size one.
const PAGE_NUMBER_KEYS: [&str; 6] = ["page", "pageNumber", "page_number", "pageNo", "pageIndex", "page_no"];
const PAGE_SIZE_KEYS: [&str; 8] =
    ["perPage", "per_page", "pageSize", "page_size", "limit", "size", "pageLimit", "count"];
/// A page's count of pages, its flag of more pages, and its number.
const TOTAL_PAGES_KEYS: [&str; 7] =
    ["totalPages", "total_pages", "pageCount", "page_count", "pagesTotal", "lastPage", "last_page"];
const HAS_MORE_KEYS: [&str; 5] = ["hasMore", "has_more", "hasNext", "has_next", "hasNextPage"];
const CURRENT_PAGE_KEYS: [&str; 5] = ["page", "currentPage", "current_page", "pageNumber", "page_number"];
/// A listing's cursor parameter, and where its page says the next one.
const CURSOR_KEYS: [&str; 4] = ["cursor", "pageToken", "page_token", "next"];
const NEXT_CURSOR_KEYS: [&str; 6] =
    ["cursor", "nextCursor", "next_cursor", "nextPageToken", "next_page_token", "next"];

/// The envelope at least [`SHARED_PERCENT`] of the answers share (two at least): a data
/// key, and a code or a flag; `None` when they share none.
pub(super) fn envelope<'a>(answers: &[(&'a Value, String)], schemas: &mut Schemas<'a>) -> Option<Envelope> {
    let mut tops: Vec<Vec<(&'a str, &'a Value)>> = Vec::new();
    for (schema, pointer) in answers {
        let schema = schemas.resolve(schema, pointer);
        let members = schemas.members(schema, pointer);
        if !members.properties.is_empty() {
            tops.push(members.properties);
        }
    }
    if tops.len() < 2 {
        return None;
    }
    let share = |key: &str| tops.iter().filter(|top| top.iter().any(|(name, _)| *name == key)).count();
    let enough = |count: usize| count * 100 >= tops.len() * SHARED_PERCENT;
    let data = DATA_KEYS.into_iter().find(|key| enough(share(key)))?;
    let code: Vec<String> =
        CODE_KEYS.into_iter().filter(|key| enough(share(key))).map(str::to_owned).collect();
    // The format takes 1 to 4 keys a list.
    let description: Vec<String> =
        DESCRIPTION_KEYS.into_iter().filter(|key| enough(share(key))).take(4).map(str::to_owned).collect();
    // A flag is a boolean wherever it is typed.
    let flag = FLAG_KEYS.into_iter().find(|key| {
        enough(share(key))
            && tops.iter().flat_map(|top| top.iter()).filter(|(name, _)| name == key).all(|(_, schema)| {
                schema.get("type").and_then(Value::as_str).is_none_or(|ty| ty == "boolean")
            })
    });
    if code.is_empty() && flag.is_none() {
        return None;
    }
    // The codes the answers' examples, enumerations and defaults show for success.
    let mut success_codes: Vec<String> = Vec::new();
    for (name, schema) in tops.iter().flat_map(|top| top.iter()) {
        if !code.iter().any(|c| c == name) {
            continue;
        }
        let shown = ["example", "default"]
            .into_iter()
            .filter_map(|key| schema.get(key))
            .chain(schema.get("enum").and_then(Value::as_array).into_iter().flatten());
        for value in shown {
            let text = match value {
                Value::String(text) => text.clone(),
                Value::Number(number) => number.to_string(),
                _ => continue,
            };
            if !success_codes.contains(&text) {
                success_codes.push(text);
            }
        }
    }
    Some(Envelope { data: data.to_owned(), code, description, flag: flag.map(str::to_owned), success_codes })
}

/// Whether a top-level answer schema has the envelope's data key: its data's schema.
pub(super) fn data_of<'a>(
    answer: &'a Value,
    pointer: &str,
    envelope: &Envelope,
    schemas: &mut Schemas<'a>,
) -> Option<&'a Value> {
    let answer = schemas.resolve(answer, pointer);
    let members = schemas.members(answer, pointer);
    members.properties.iter().find(|(name, _)| *name == envelope.data).map(|(_, schema)| *schema)
}

/// A listing's paging, from its query parameters' wire keys and its answer.
pub(super) enum Paging {
    /// `page_size`: the wire keys of its page number and size, and where its page says how
    /// many pages there are or whether more follow.
    PageSize { page: String, size: Option<String>, keys: PageKeys },
    /// `cursor`: the wire key of its cursor, and where its page says the next one.
    Cursor { cursor: String, keys: PageKeys },
}

/// How a listing pages: by a page pair whose answer counts its pages (or says more
/// follow), or by a cursor its answer gives; `None` when the document shows neither.
/// `page_fields` are the wire keys of the page's data (or, after `$.`, of the whole answer),
/// with `.` between levels.
pub(super) fn paging(query: &[&str], page_fields: &[String]) -> Option<Paging> {
    let has = |keys: &[&str]| keys.iter().find(|key| query.contains(key)).map(|key| (*key).to_owned());
    let field = |keys: &[&str]| {
        // The shallowest field whose last key is one of these.
        let mut found: Vec<&String> = page_fields
            .iter()
            .filter(|path| keys.contains(&path.rsplit(['.']).next().unwrap_or(path)))
            .collect();
        found.sort_by_key(|path| path.matches('.').count());
        found.first().map(|path| (*path).clone())
    };
    if let Some(page) = has(&PAGE_NUMBER_KEYS) {
        let keys = PageKeys {
            cursor: None,
            has_more: field(&HAS_MORE_KEYS),
            page: field(&CURRENT_PAGE_KEYS),
            total_pages: field(&TOTAL_PAGES_KEYS),
        };
        if keys.has_more.is_some() || keys.total_pages.is_some() {
            return Some(Paging::PageSize { page, size: has(&PAGE_SIZE_KEYS), keys });
        }
    }
    if let Some(cursor) = has(&CURSOR_KEYS)
        && let Some(next) = field(&NEXT_CURSOR_KEYS)
    {
        return Some(Paging::Cursor { cursor, keys: PageKeys { cursor: Some(next), ..PageKeys::default() } });
    }
    None
}

/// A query parameter that looks like it leads a listing on (a page number or a cursor),
/// whether or not its page says where.
pub(super) fn leads_on(query: &[&str]) -> Option<String> {
    PAGE_NUMBER_KEYS.iter().chain(&CURSOR_KEYS).find(|key| query.contains(key)).map(|key| (*key).to_owned())
}

/// Whether a header parameter is an idempotency key, by its name.
pub(super) fn is_idempotency_header(wire: &str) -> bool {
    let lower = wire.to_ascii_lowercase();
    lower.contains("idempotency") || lower.contains("idempotent")
}

/// Whether an operation's name or path says it moves money (a transfer, a payout, a
/// charge, a payment, a refund) and not that it reads something about one (`get`, `list`,
/// `methods`, `verify`): such an operation gets the choice of `effect: money`.
pub(super) fn may_move_money(name: &str, path: &str) -> bool {
    const MOVES: [&str; 14] = [
        "transfer",
        "transfers",
        "payout",
        "payouts",
        "charge",
        "charges",
        "payment",
        "payments",
        "refund",
        "refunds",
        "withdraw",
        "withdrawal",
        "disburse",
        "disbursement",
    ];
    const READS: [&str; 13] = [
        "get", "list", "fetch", "retrieve", "verify", "check", "methods", "status", "search", "export",
        "lookup", "validate", "resolve",
    ];
    let path = super::names::snake(path, "");
    let words: Vec<&str> = name.split('_').chain(path.split('_')).collect();
    words.iter().any(|w| MOVES.contains(w)) && !name.split('_').any(|w| READS.contains(&w))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_pair_pages_where_the_answer_counts_its_pages_and_a_cursor_where_it_gives_the_next() {
        let fields = |list: &[&str]| list.iter().map(|f| (*f).to_owned()).collect::<Vec<_>>();
        let Some(Paging::PageSize { page, size, keys }) =
            paging(&["page", "perPage"], &fields(&["items", "$.meta.pageCount", "$.meta.page"]))
        else {
            panic!("a page pair")
        };
        assert_eq!((page.as_str(), size.as_deref()), ("page", Some("perPage")));
        assert_eq!(keys.total_pages.as_deref(), Some("$.meta.pageCount"));
        assert_eq!(keys.page.as_deref(), Some("$.meta.page"));
        // A page pair whose answer says nothing of the pages is no paging the client can follow.
        assert!(paging(&["page", "limit"], &fields(&["items"])).is_none());
        let Some(Paging::Cursor { cursor, keys }) =
            paging(&["cursor", "limit"], &fields(&["results", "cursor"]))
        else {
            panic!("a cursor")
        };
        assert_eq!((cursor.as_str(), keys.cursor.as_deref()), ("cursor", Some("cursor")));
        assert!(is_idempotency_header("Idempotency-Key") && is_idempotency_header("X-Idempotent-key"));
        assert!(!is_idempotency_header("X-Request-Id"));
        assert!(may_move_money("perform_bank_transfer", "/v2/transfers/bank"));
        assert!(may_move_money("create", "/v1/payouts"));
        assert!(!may_move_money("post_payment_methods", "/paymentMethods"));
        assert!(!may_move_money("fetch_transfer", "/transfer/{id}"));
    }
}
