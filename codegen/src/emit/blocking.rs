//! The `blocking` module of `payspec-client` (its `blocking` feature): the same operations
//! without an async runtime in the caller's code. Each method hands the async method to the
//! runtime's `BlockingRuntime`; listings are read to their end.

use super::client::group_accessors;
use super::code::Code;
use super::names::{Gates, Names, data_type, field_ident, page_item, request_type};
use super::settle::{ByReference, by_reference, reference_params};
use crate::model::{Operation, Spec};
use heck::{ToSnakeCase, ToUpperCamelCase};

/// The blocking client of `spec`, as items of a module inside `payspec-client`.
pub(super) fn blocking_items(out: &mut Code, spec: &Spec, names: &Names, gates: &Gates) {
    out.push(
        "use ::payspec_runtime::__private as rt;
// Unused when a crate compiles no group.
#[allow(unused_imports)]
use super::requests;
/// The client for code without an async runtime (scripts, command-line tools): the
/// same groups and operations as [`crate::Client`], each call run to its end on a
/// runtime of its own. Do not use it inside async code.
#[derive(Debug)]
pub struct Client {
    client: super::Client,
    #[allow(dead_code)]
    runtime: rt::BlockingRuntime,
}
impl Client {
    /// Wraps an async client, built as usual with `Client::builder()`.
    pub fn new(client: super::Client) -> Result<Self, rt::Error> {
        Ok(Client { client, runtime: rt::BlockingRuntime::new()? })
    }
    /// The async client inside.
    pub fn inner(&self) -> &super::Client { &self.client }
",
    );
    group_accessors(out, spec, gates, |ty| (format!("{ty}<'_>"), format!("{ty} {{ client: self }}")));
    out.push("}\n");
    for group in &spec.groups {
        let ty = group.key.to_upper_camel_case();
        let async_group = field_ident(&group.key.to_snake_case());
        out.gated(gates.group(&group.key).as_deref(), "", |out| {
            out.doc_line("", &format!("The {} operations, blocking.", group.title));
            write!(
                out,
                "#[derive(Clone, Copy, Debug)]\npub struct {ty}<'a> {{ client: &'a Client }}\nimpl {ty}<'_> {{\n"
            );
            for op in spec.operations.iter().filter(|op| op.group == group.key) {
                blocking_methods(out, spec, op, names, &async_group);
                blocking_settle(out, spec, op, names, gates, &async_group);
            }
            out.push("}\n");
        });
    }
}

fn blocking_methods(out: &mut Code, spec: &Spec, op: &Operation, names: &Names, group: &str) {
    let method = field_ident(&op.name);
    let ty = request_type(op);
    let data = data_type(op, "super::types");
    out.doc_line("    ", &format!("[`{}`](crate::groups), blocking: {}", op.name, op.summary));
    write!(
        out,
        "    pub fn {method}(&self, request: requests::{ty}) -> Result<rt::Outcome<{data}>, rt::Error> {{
        self.client.runtime.block_on(self.client.client.{group}().{method}(request))
    }}
"
    );
    if let Some(items) = spec.page_items(op) {
        let (item, _) = page_item(items, names, "super::types");
        let items = format!("{}_items", op.name);
        out.doc_line(
            "    ",
            &format!("Every record of `{}`, across its pages: the whole listing, read to its end.", op.name),
        );
        write!(
            out,
            "    pub fn {items}(&self, request: requests::{ty}) -> Result<Vec<{item}>, rt::Error> {{
        self.client.runtime.block_on(self.client.client.{group}().{items}(request).all())
    }}
"
        );
    }
}

/// The blocking `settle_<op>` and `settle_<op>_by_reference`, where the async client has them.
fn blocking_settle(out: &mut Code, spec: &Spec, op: &Operation, names: &Names, gates: &Gates, group: &str) {
    let Some(settle) = &op.settle else { return };
    let reads: Vec<&Operation> = settle.lookups.iter().filter_map(|l| spec.operation(&l.operation)).collect();
    let Some(first) = reads.first() else { return };
    let name = &op.name;
    let ty = request_type(op);
    let data = data_type(op, "super::types");
    let answer = data_type(first, "super::types");
    let others: std::collections::BTreeSet<&String> =
        reads.iter().map(|read| &read.group).filter(|g| **g != op.group).collect();
    out.doc_line(
        "    ",
        &format!("[`settle_{name}`](crate::groups), blocking: follows `{name}` to its final state."),
    );
    if let Some(gate) = gates.all(others.iter().copied()) {
        writeln!(out, "    {gate}");
    }
    write!(
        out,
        "    pub fn settle_{name}(&self, request: &requests::{ty}, outcome: &rt::Outcome<{data}>, options: rt::SettleOptions) -> Result<rt::Settled<{answer}>, rt::Error> {{
        self.client.runtime.block_on(self.client.client.{group}().settle_{name}(request, outcome, options))
    }}
"
    );
    let Some(ByReference { args, groups, .. }) = by_reference(spec, op) else { return };
    out.doc_line(
        "    ",
        &format!("[`settle_{name}_by_reference`](crate::groups), blocking: from the references `{name}` was sent with alone."),
    );
    if let Some(gate) = gates.all(groups.iter().copied()) {
        writeln!(out, "    {gate}");
    }
    let params = reference_params(&args, names);
    let pass = args.iter().map(|p| field_ident(&p.name)).collect::<Vec<_>>().join(", ");
    write!(
        out,
        "    pub fn settle_{name}_by_reference(&self, {params}, options: rt::SettleOptions) -> Result<rt::Settled<{answer}>, rt::Error> {{
        self.client.runtime.block_on(self.client.client.{group}().settle_{name}_by_reference({pass}, options))
    }}
"
    );
}
