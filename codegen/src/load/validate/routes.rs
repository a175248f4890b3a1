//! Across operations: the Rust names they become and the routes they share.

use super::super::diagnostics::Sink;
use super::common::GROUP_METHODS;
use crate::model::{Method, Operation, PathTemplate};
use heck::ToUpperCamelCase;
use std::collections::{HashMap, HashSet};

/// Operation names must be unique, also once turned into Rust type names, and no other
/// listing may reuse them.
pub(super) fn check_names(operations: &[Operation], sink: &mut Sink) {
    // The types each operation's request brings to the `requests` module: its own, its
    // builder's, and one per `one_of` set; the first to take a name, and what it is of it.
    let mut types: HashMap<String, (&str, String)> = HashMap::new();
    for op in operations {
        let ty = op.name.to_upper_camel_case();
        let sets = op.one_of.iter().map(|set| {
            (
                format!("{ty}{}", set.name.to_upper_camel_case()),
                format!("the `{}` set of its request", set.name),
            )
        });
        let own = [
            (ty.clone(), "its request".to_owned()),
            (format!("{ty}Builder"), "its request's builder".to_owned()),
        ];
        let mut seen = HashSet::new();
        for (name, what) in own.into_iter().chain(sets) {
            if !seen.insert(name.clone()) {
                sink.error(
                    &format!("operations.{}", op.name),
                    format!("two types of `{}`'s request are both the Rust type `{name}`", op.name),
                    "rename its `one_of` set",
                );
                continue;
            }
            match types.get(&name) {
                // Two requests of one type: said once, not again for their builders.
                Some((first, first_what)) if name == ty && first_what == "its request" => {
                    sink.error(
                        &format!("operations.{}", op.name),
                        format!("`{}` and `{first}` both become the Rust type `{ty}`", op.name),
                        "rename one of them",
                    );
                    break;
                }
                Some((first, first_what)) => sink.error(
                    &format!("operations.{}", op.name),
                    format!(
                        "`{}` ({what}) and `{first}` ({first_what}) both become the Rust type `{name}`",
                        op.name
                    ),
                    "rename one of them",
                ),
                None => {
                    types.insert(name, (&op.name, what));
                }
            }
        }
    }
    let names: HashSet<&str> = operations.iter().map(|o| o.name.as_str()).collect();
    // The methods the generated client adds beside each operation's own: a listing's
    // `<name>_pages` and `<name>_items`, a settling operation's `settle_<name>` and
    // `settle_<name>_by_reference`, and every group's `with_options`.
    for op in operations {
        let mut methods = Vec::new();
        if op.pagination.is_some() {
            methods.push((format!("{}_pages", op.name), "follows the listing"));
            methods.push((format!("{}_items", op.name), "follows the listing"));
        }
        if op.settle.is_some() {
            methods.push((format!("settle_{}", op.name), "follows to its final state"));
            methods.push((format!("settle_{}_by_reference", op.name), "follows to its final state"));
        }
        for (method, does) in methods {
            if names.contains(method.as_str()) {
                sink.error(
                    &format!("operations.{method}"),
                    format!("`{method}` is already the method that {does} `{}`", op.name),
                    "rename the operation",
                );
            }
        }
    }
    for op in operations.iter().filter(|op| GROUP_METHODS.contains(&op.name.as_str())) {
        sink.error(
            &format!("operations.{}", op.name),
            format!("`{}` is already a method of every group, which sets a call's options", op.name),
            format!("rename the operation, e.g. `{}_operation`", op.name),
        );
    }
    let mut listed: HashMap<&str, &str> = HashMap::new();
    for op in operations {
        for (i, listing) in op.also_listed_as.iter().enumerate() {
            let Some(other) = listing.name.as_deref() else { continue };
            let at = format!("operations.{}.also_listed_as[{i}].name", op.name);
            if names.contains(other) {
                sink.error(&at, format!("`{other}` is already an operation; one operation cannot be listed under another's name"), "pick a name no operation uses, or merge the two operations");
            } else if let Some(first) = listed.insert(other, &op.name) {
                sink.error(
                    &at,
                    format!("`{other}` is also given as another listing of `{first}`"),
                    "give each listing its own name",
                );
            }
        }
    }
}

/// Two routes with the same method and path shape receive the same requests: that must be
/// declared on an alias with `same_route_as`, or it is an error.
pub(super) fn check_routes(operations: &[Operation], unreadable: &[String], sink: &mut Sink) {
    struct Seen<'a> {
        op: &'a Operation,
        path: &'a PathTemplate,
        at: String,
        declares: Option<&'a str>,
    }
    let mut seen: HashMap<(Method, String), Vec<Seen>> = HashMap::new();
    let names: Vec<&str> = operations.iter().map(|o| o.name.as_str()).collect();
    for op in operations {
        let base = format!("operations.{}", op.name);
        seen.entry((op.method, op.path.shape())).or_default().push(Seen {
            op,
            path: &op.path,
            at: format!("{base}.path"),
            declares: None,
        });
        for (i, alias) in op.aliases.iter().enumerate() {
            let at = format!("{base}.aliases[{i}]");
            if let Some(target) = &alias.same_route_as {
                if target == &op.name {
                    sink.error(
                        &format!("{at}.same_route_as"),
                        "an alias cannot share a route with its own operation",
                        "remove `same_route_as`",
                    );
                } else if !names.contains(&target.as_str()) && !unreadable.contains(target) {
                    let hint = match sink.suggest(target, &names) {
                        Some(best) => format!("did you mean `{best}`?"),
                        None => "name the operation whose route this alias repeats".into(),
                    };
                    sink.error(&format!("{at}.same_route_as"), format!("unknown operation `{target}`"), hint);
                }
            }
            seen.entry((alias.method, alias.path.shape())).or_default().push(Seen {
                op,
                path: &alias.path,
                at,
                declares: alias.same_route_as.as_deref(),
            });
        }
    }
    let mut keys: Vec<&(Method, String)> = seen.keys().collect();
    keys.sort();
    for key in keys {
        let routes = &seen[key];
        // Which routes take part in an undeclared clash: one error for the whole group.
        let mut clashing = vec![false; routes.len()];
        for (i, later) in routes.iter().enumerate().skip(1) {
            for (j, earlier) in routes[..i].iter().enumerate() {
                if earlier.op.name == later.op.name {
                    sink.error(
                        &later.at,
                        format!("{} {} repeats a route of the same operation", key.0, later.op.path),
                        "remove the repeated form",
                    );
                    continue;
                }
                let declared = later.declares == Some(earlier.op.name.as_str())
                    || earlier.declares == Some(later.op.name.as_str());
                if !declared {
                    clashing[i] = true;
                    clashing[j] = true;
                }
            }
        }
        let involved: Vec<&Seen> =
            routes.iter().zip(&clashing).filter(|(_, c)| **c).map(|(r, _)| r).collect();
        let [first, second, rest @ ..] = involved.as_slice() else { continue };
        let message = if rest.is_empty() {
            format!(
                "`{}` has the same route as `{}`: {} {} and {} {}",
                second.op.name, first.op.name, key.0, second.path, key.0, first.path
            )
        } else {
            let shown: Vec<String> = involved.iter().take(5).map(|r| format!("`{}`", r.op.name)).collect();
            let more = involved.len().saturating_sub(5);
            let more = if more > 0 { format!(" and {more} more") } else { String::new() };
            format!("{}{more} have the same route, {} {}", shown.join(", "), key.0, first.path)
        };
        sink.error(
            &second.at,
            message,
            format!(
                "if they really share the route, declare it on the alias with `same_route_as: {}`; otherwise fix the method or path",
                first.op.name
            ),
        );
    }
    // A declaration must point at a route that really is shared.
    for op in operations {
        for (i, alias) in op.aliases.iter().enumerate() {
            let Some(target) = alias.same_route_as.as_deref() else { continue };
            let Some(other) = operations.iter().find(|o| o.name == target) else { continue };
            let shared = std::iter::once((other.method, other.path.shape()))
                .chain(other.aliases.iter().map(|a| (a.method, a.path.shape())))
                .any(|r| r == (alias.method, alias.path.shape()));
            if !shared && target != op.name {
                sink.error(
                    &format!("operations.{}.aliases[{i}].same_route_as", op.name),
                    format!("`{target}` has no route {} {}", alias.method, alias.path),
                    "remove `same_route_as`: this alias does not repeat that operation's route",
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{assert_refused, small};

    #[test]
    fn two_operations_on_one_route_are_refused() {
        let spec = small();
        let first = spec.find("\n  issue_token:\n").expect("the small spec issues tokens");
        let copy = spec[first..].split("\n  refresh_token:\n").next().unwrap_or_default().replacen(
            "issue_token:",
            "issue_token_again:",
            1,
        );
        let text = format!("{spec}{copy}\n");
        assert_refused(&text, "issue_token_again");
    }

    #[test]
    fn an_operation_named_as_another_s_builder_is_refused() {
        let spec = small();
        let first = spec.find("\n  revoke_token:\n").expect("the small spec revokes tokens");
        let copy = spec[first..]
            .split("\n  bank_transfer_from_sub_account:\n")
            .next()
            .unwrap_or_default()
            .replacen("revoke_token:", "issue_token_builder:", 1)
            .replacen("/v1/auth/token/revoke", "/v1/auth/token/builder", 1);
        let text = format!("{spec}{copy}\n");
        assert_refused(
            &text,
            "`issue_token_builder` (its request) and `issue_token` (its request's builder) both become the Rust type `IssueTokenBuilder`",
        );
    }
}
