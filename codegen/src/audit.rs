//! The path audit: where the routes of a spec duplicate, alias or shadow each other.
//!
//! Every route is audited, aliases included, because the service answers on all of them.

use crate::model::{Method, Operation, RouteRef, Segment, Spec};
use serde::Serialize;
use std::collections::BTreeMap;

/// One route, as findings name it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RouteName {
    /// The operation the route belongs to.
    pub operation: String,
    /// Its method.
    pub method: &'static str,
    /// Its path template.
    pub path: String,
    /// Whether it is an alias rather than the canonical form.
    pub alias: bool,
}

impl RouteName {
    fn of(route: &RouteRef<'_>) -> RouteName {
        RouteName {
            operation: route.operation.name.clone(),
            method: route.method.as_str(),
            path: route.path.as_str().to_owned(),
            alias: route.alias.is_some(),
        }
    }
}

impl std::fmt::Display for RouteName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {} ({}{})",
            self.method,
            self.path,
            self.operation,
            if self.alias { ", alias" } else { "" }
        )
    }
}

/// One thing the audit found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Finding {
    /// Two or more routes with the same method and the same template up to variable names.
    IdenticalRoute {
        /// The routes, in spec order.
        routes: Vec<RouteName>,
        /// Whether the spec declares the overlap with `same_route_as`.
        declared: bool,
    },
    /// An operation's declared alternative form.
    AlternativeForm {
        /// The canonical form.
        canonical: RouteName,
        /// The alternative form.
        alternative: RouteName,
        /// Where the alternative comes from.
        note: String,
    },
    /// The same path and parameters offered under both GET and POST.
    MethodAmbiguity {
        /// The GET route.
        get: RouteName,
        /// The POST route.
        post: RouteName,
        /// The parameter names both take.
        params: Vec<String>,
    },
    /// An operation the interface lists more than once.
    ListedTwice {
        /// The operation.
        operation: String,
        /// Its group.
        group: String,
        /// The other listings: `group` or `group/name`, with the note.
        listings: Vec<String>,
    },
    /// A literal segment of one route stands where another route has a variable, so a
    /// request for the second with that literal value reaches the first.
    Shadowing {
        /// The route with the literal segment, which receives the misrouted requests.
        literal: RouteName,
        /// The route with the variable, whose callers lose the requests.
        variable: RouteName,
        /// The variable's name.
        variable_name: String,
        /// The value of the variable that would be misrouted.
        misrouted_value: String,
    },
}

impl Finding {
    /// The finding's kind, as in JSON.
    pub fn kind(&self) -> &'static str {
        match self {
            Finding::IdenticalRoute { .. } => "identical_route",
            Finding::AlternativeForm { .. } => "alternative_form",
            Finding::MethodAmbiguity { .. } => "method_ambiguity",
            Finding::ListedTwice { .. } => "listed_twice",
            Finding::Shadowing { .. } => "shadowing",
        }
    }

    /// One readable line.
    pub fn describe(&self) -> String {
        match self {
            Finding::IdenticalRoute { routes, declared } => {
                let list: Vec<String> = routes.iter().map(ToString::to_string).collect();
                format!("{} [{}]", list.join(" = "), if *declared { "declared" } else { "NOT DECLARED" })
            }
            Finding::AlternativeForm { canonical, alternative, note } => {
                format!(
                    "{} {} also answers {} {}: {note}",
                    canonical.method, canonical.path, alternative.method, alternative.path
                )
            }
            Finding::MethodAmbiguity { get, post, params } => {
                format!(
                    "GET {} ({}) and POST {} ({}) take the same parameters: {}",
                    get.path,
                    get.operation,
                    post.path,
                    post.operation,
                    params.join(", ")
                )
            }
            Finding::ListedTwice { operation, group, listings } => {
                format!("{operation} ({group}) is also listed as {}", listings.join("; "))
            }
            Finding::Shadowing { literal, variable, variable_name, misrouted_value } => format!(
                "{} {} ({}) is shadowed by {} {} ({}): {{{variable_name}}} = \"{misrouted_value}\" would be misrouted",
                variable.method,
                variable.path,
                variable.operation,
                literal.method,
                literal.path,
                literal.operation
            ),
        }
    }
}

/// The kinds of finding, in report order.
pub const KINDS: [(&str, &str); 5] = [
    ("identical_route", "Identical routes"),
    ("alternative_form", "Alternative forms"),
    ("method_ambiguity", "Method ambiguity (GET and POST)"),
    ("listed_twice", "Operations listed twice"),
    ("shadowing", "Templates that shadow each other"),
];

/// Audits every route of `spec`.
pub fn audit(spec: &Spec) -> Vec<Finding> {
    let routes: Vec<RouteRef<'_>> = spec.routes().collect();
    // Each route's shape once (method and shape group the checks below: n log n, not n²).
    let shapes: Vec<String> = routes.iter().map(|r| r.path.shape()).collect();
    let mut findings = Vec::new();
    identical_routes(&routes, &shapes, &mut findings);
    for op in &spec.operations {
        alternative_forms(op, &mut findings);
    }
    method_ambiguity(&routes, &shapes, &mut findings);
    for op in &spec.operations {
        listed_twice(op, &mut findings);
    }
    shadowing(&routes, &mut findings);
    findings
}

/// Whether any identical route is undeclared (the audit fails then).
pub fn has_undeclared_identical_route(findings: &[Finding]) -> bool {
    findings.iter().any(|f| matches!(f, Finding::IdenticalRoute { declared: false, .. }))
}

fn identical_routes(routes: &[RouteRef<'_>], shapes: &[String], out: &mut Vec<Finding>) {
    // Route indices by method and shape; each group keeps spec order.
    let mut by_shape: BTreeMap<(Method, &str), Vec<usize>> = BTreeMap::new();
    for (i, route) in routes.iter().enumerate() {
        by_shape.entry((route.method, shapes[i].as_str())).or_default().push(i);
    }
    // Report each group at its first route, in spec order.
    let mut groups: Vec<Vec<usize>> = by_shape.into_values().filter(|g| g.len() > 1).collect();
    groups.sort_by_key(|g| g[0]);
    for group in groups {
        let group: Vec<&RouteRef<'_>> = group.into_iter().map(|i| &routes[i]).collect();
        let declared = group.iter().enumerate().all(|(i, route)| {
            group
                .iter()
                .enumerate()
                .all(|(j, other)| i == j || declares(route, other) || declares(other, route))
        });
        out.push(Finding::IdenticalRoute {
            routes: group.iter().map(|r| RouteName::of(r)).collect(),
            declared,
        });
    }
}

fn declares(route: &RouteRef<'_>, other: &RouteRef<'_>) -> bool {
    route.alias.and_then(|a| a.same_route_as.as_deref()) == Some(other.operation.name.as_str())
}

fn alternative_forms(op: &Operation, out: &mut Vec<Finding>) {
    let canonical = RouteName {
        operation: op.name.clone(),
        method: op.method.as_str(),
        path: op.path.to_string(),
        alias: false,
    };
    for alias in &op.aliases {
        out.push(Finding::AlternativeForm {
            canonical: canonical.clone(),
            alternative: RouteName {
                operation: op.name.clone(),
                method: alias.method.as_str(),
                path: alias.path.to_string(),
                alias: true,
            },
            note: alias.note.clone(),
        });
    }
}

fn param_names(op: &Operation) -> Vec<String> {
    let mut names: Vec<String> =
        op.params.iter().filter(|p| p.fixed.is_none()).map(|p| p.name.clone()).collect();
    names.sort();
    names
}

fn method_ambiguity(routes: &[RouteRef<'_>], shapes: &[String], out: &mut Vec<Finding>) {
    let mut posts: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, _) in routes.iter().enumerate().filter(|(_, r)| r.method == Method::Post) {
        posts.entry(shapes[i].as_str()).or_default().push(i);
    }
    for (i, get) in routes.iter().enumerate().filter(|(_, r)| r.method == Method::Get) {
        let Some(same_shape) = posts.get(shapes[i].as_str()) else { continue };
        let params = param_names(get.operation);
        for post in same_shape.iter().map(|&j| &routes[j]) {
            if std::ptr::eq(get.operation, post.operation) || params == param_names(post.operation) {
                out.push(Finding::MethodAmbiguity {
                    get: RouteName::of(get),
                    post: RouteName::of(post),
                    params: params.clone(),
                });
            }
        }
    }
}

fn listed_twice(op: &Operation, out: &mut Vec<Finding>) {
    if op.also_listed_as.is_empty() {
        return;
    }
    let listings = op
        .also_listed_as
        .iter()
        .map(|l| match &l.name {
            Some(name) => format!("{}/{name}: {}", l.group, l.note),
            None => format!("{}: {}", l.group, l.note),
        })
        .collect();
    out.push(Finding::ListedTwice { operation: op.name.clone(), group: op.group.clone(), listings });
}

/// The routes as a tree of segments, one per method: a route's path leads from its
/// method's root through one child per segment (literals by text, variables to one shared
/// child), and it is listed where its path ends.
#[derive(Default)]
struct RouteTree<'a> {
    nodes: Vec<TreeNode<'a>>,
    roots: BTreeMap<Method, usize>,
}

#[derive(Default)]
struct TreeNode<'a> {
    literals: BTreeMap<&'a str, usize>,
    variable: Option<usize>,
    ends: Vec<usize>,
}

impl<'a> RouteTree<'a> {
    fn new(routes: &'a [RouteRef<'a>]) -> Self {
        let mut tree = RouteTree::default();
        for (i, route) in routes.iter().enumerate() {
            let mut node = tree.root(route.method);
            for segment in route.path.segments() {
                let next = match segment {
                    Segment::Literal(text) => tree.nodes[node].literals.get(text.as_str()).copied(),
                    Segment::Variable(_) => tree.nodes[node].variable,
                };
                node = match next {
                    Some(next) => next,
                    None => {
                        let fresh = tree.push();
                        match segment {
                            Segment::Literal(text) => tree.nodes[node].literals.insert(text.as_str(), fresh),
                            Segment::Variable(_) => tree.nodes[node].variable.replace(fresh),
                        };
                        fresh
                    }
                };
            }
            tree.nodes[node].ends.push(i);
        }
        tree
    }

    fn push(&mut self) -> usize {
        self.nodes.push(TreeNode::default());
        self.nodes.len() - 1
    }

    fn root(&mut self, method: Method) -> usize {
        if let Some(&root) = self.roots.get(&method) {
            return root;
        }
        let root = self.push();
        self.roots.insert(method, root);
        root
    }

    /// Every route of `method` that a request matching `segments` could also match: each
    /// literal agrees with a literal or a variable; a variable agrees with anything.
    fn compatible(&self, method: Method, segments: &[Segment], found: &mut Vec<usize>) {
        fn walk(tree: &RouteTree<'_>, node: usize, segments: &[Segment], found: &mut Vec<usize>) {
            let node = &tree.nodes[node];
            let Some((first, rest)) = segments.split_first() else {
                found.extend(&node.ends);
                return;
            };
            match first {
                Segment::Literal(text) => {
                    if let Some(&next) = node.literals.get(text.as_str()) {
                        walk(tree, next, rest, found);
                    }
                }
                Segment::Variable(_) => {
                    for &next in node.literals.values() {
                        walk(tree, next, rest, found);
                    }
                }
            }
            if let Some(next) = node.variable {
                walk(tree, next, rest, found);
            }
        }
        if let Some(&root) = self.roots.get(&method) {
            walk(self, root, segments, found);
        }
    }
}

fn shadowing(routes: &[RouteRef<'_>], out: &mut Vec<Finding>) {
    let tree = RouteTree::new(routes);
    let mut found = Vec::new();
    for (i, variable) in routes.iter().enumerate() {
        if !variable.path.segments().iter().any(|s| matches!(s, Segment::Variable(_))) {
            continue;
        }
        found.clear();
        tree.compatible(variable.method, variable.path.segments(), &mut found);
        // In spec order, as the routes are listed.
        found.sort_unstable();
        for literal in found.iter().filter(|&&j| j != i).map(|&j| &routes[j]) {
            // Where `literal` is more specific, its request goes to it, not to `variable`.
            let misrouted =
                variable.path.segments().iter().zip(literal.path.segments()).filter_map(|pair| match pair {
                    (Segment::Variable(name), Segment::Literal(value)) => Some((name.clone(), value.clone())),
                    _ => None,
                });
            for (variable_name, misrouted_value) in misrouted {
                out.push(Finding::Shadowing {
                    literal: RouteName::of(literal),
                    variable: RouteName::of(variable),
                    variable_name,
                    misrouted_value,
                });
            }
        }
    }
}

/// For each operation, the values of its path variables that another route of the spec
/// would receive instead: `(operation, variable, literal value, receiving operation)`.
/// The client refuses them before sending. Only canonical forms count on the variable side
/// (the client sends nothing else), but any route may receive: the service answers them all.
pub fn reserved_segments(findings: &[Finding]) -> Vec<(&str, &str, &str, &str)> {
    let mut out: Vec<(&str, &str, &str, &str)> = findings
        .iter()
        .filter_map(|f| match f {
            Finding::Shadowing { literal, variable, variable_name, misrouted_value } if !variable.alias => {
                Some((
                    variable.operation.as_str(),
                    variable_name.as_str(),
                    misrouted_value.as_str(),
                    literal.operation.as_str(),
                ))
            }
            _ => None,
        })
        .filter(|(op, _, _, receiver)| op != receiver)
        .collect();
    out.sort();
    out.dedup_by(|a, b| a.0 == b.0 && a.1 == b.1 && a.2 == b.2);
    out
}
