//! A request type's `write`: the order its parameters are written in, and for each the
//! runtime call that checks it and puts it on the wire, one straight line per parameter.

use super::code::{Code, Lit};
use super::names::{field_ident, is_secret_text};
use crate::model::{Param, ParamLocation, Type};

/// The order the parameters are written in: the others as declared, then the body fields
/// with each object's fields together, each object where its first field was declared.
/// The runtime writes a body in that order straight into its text, and the text is the
/// one any other order would give.
pub(super) fn write_order(params: &[Param]) -> Vec<&Param> {
    let body: Vec<&Param> = params.iter().filter(|p| p.location == ParamLocation::Body).collect();
    // The first field declared inside each object.
    let mut first: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for (i, param) in body.iter().enumerate() {
        for (at, _) in param.wire.match_indices('.') {
            first.entry(&param.wire[..at]).or_insert(i);
        }
    }
    let mut keyed: Vec<(Vec<usize>, &Param)> = body
        .iter()
        .enumerate()
        .map(|(i, param)| {
            let mut key: Vec<usize> =
                param.wire.match_indices('.').map(|(at, _)| first[&param.wire[..at]]).collect();
            key.push(i);
            (key, *param)
        })
        .collect();
    keyed.sort_by(|a, b| a.0.cmp(&b.0));
    params
        .iter()
        .filter(|p| p.location != ParamLocation::Body)
        .chain(keyed.into_iter().map(|(_, p)| p))
        .collect()
}

/// The runtime call that puts one parameter on the wire, on a line of its own, after its
/// checks; `put: false` checks it only (the idempotency reference the runtime sends itself,
/// as the idempotency header).
pub(super) fn write_call(out: &mut Code, param: &Param, idempotency: bool, put: bool) {
    let wire = Lit(&param.wire);
    if let Some(fixed) = &param.fixed {
        let fixed = Lit(fixed);
        match param.location {
            ParamLocation::Body => writeln!(out, "            w.body({wire}, {fixed})?;"),
            ParamLocation::Query => writeln!(out, "            w.query({wire}, {fixed});"),
            ParamLocation::Header => writeln!(out, "            w.header({wire}, {fixed})?;"),
            ParamLocation::Path => writeln!(out, "            w.path({wire}, {fixed})?;"),
        }
        return;
    }
    let ident = field_ident(&param.name);
    if param.secret {
        // Noted so that the client removes the value from any error, in any spelling.
        if param.required {
            writeln!(out, "            w.secret(&self.{ident});");
        } else {
            writeln!(out, "            w.secret_opt(self.{ident}.as_ref());");
        }
    }
    if let Some(max) = param.max {
        // Checked before anything is sent.
        let value =
            if param.required { format!("Some(&self.{ident})") } else { format!("self.{ident}.as_ref()") };
        writeln!(out, "            w.at_most({wire}, {value}, {max}i64)?;");
    }
    if let Some(rule) = text_rule(param, idempotency) {
        // Checked before anything is sent, as the service would check it.
        let value = if param.required {
            format!("Some(self.{ident}.as_str())")
        } else {
            format!("self.{ident}.as_ref().map(|v| v.as_str())")
        };
        writeln!(out, "            w.text({wire}, {value}, {rule})?;");
    }
    let call = write_value(param, &ident);
    if put && !call.is_empty() {
        writeln!(out, "            {call}");
    }
}

/// The rule a text parameter is checked by before sending, if it has one: required text
/// (and the idempotency reference) is never blank; a stated format or length holds.
fn text_rule(param: &Param, idempotency: bool) -> Option<String> {
    let text_like = matches!(param.ty, Type::String | Type::Identifier(_)) && param.values.is_empty();
    if !text_like || is_secret_text(param) || param.fixed.is_some() {
        return None;
    }
    let not_blank = param.required || idempotency;
    if !not_blank && param.format.is_none() && param.length.is_none() {
        return None;
    }
    let format = payspec_vocabulary::rust::value(&param.format.unwrap_or_default(), "rt");
    let length = param.length.map_or("None".to_owned(), |n| format!("Some({n})"));
    Some(format!("rt::TextRule {{ not_blank: {not_blank}, format: {format}, length: {length} }}"))
}

/// The runtime call that puts one caller-set value on the wire (nothing for an optional
/// path value, which validation rules out).
fn write_value(param: &Param, ident: &str) -> String {
    let wire = Lit(&param.wire);
    let secret = is_secret_text(param);
    let text_like = matches!(param.ty, Type::String | Type::Identifier(_)) && param.values.is_empty();
    let date = param.ty == Type::DateTime && !secret;
    let layout = format!("{:?}", param.layout);
    // How one present value is turned into what the runtime call takes.
    let value = |v: &str| -> String {
        match param.location {
            ParamLocation::Path | ParamLocation::Header | ParamLocation::Query if secret => {
                format!("{v}.expose()")
            }
            _ if date => format!("&{v}.to_wire(rt::DateLayout::{layout})"),
            ParamLocation::Path | ParamLocation::Header if text_like => format!("{v}.as_str()"),
            ParamLocation::Path | ParamLocation::Header => format!("&{v}.to_string()"),
            ParamLocation::Query if param.ty == Type::StringList => format!("&{v}.join(\",\")"),
            ParamLocation::Query => format!("&{v}"),
            ParamLocation::Body if param.as_string && param.ty == Type::Decimal => {
                format!("&{v}.as_wire_string()")
            }
            ParamLocation::Body if param.as_string => format!("&{v}.to_string()"),
            ParamLocation::Body => format!("&{v}"),
        }
    };
    // An amount in the body is written from its digits (`RequestWriter::amount`).
    let amount = param.location == ParamLocation::Body
        && param.ty == Type::Decimal
        && !param.as_string
        && param.values.is_empty();
    // ...or, where the service reads it as a string, from its text (`RequestWriter::amount_text`).
    let amount_text = param.location == ParamLocation::Body
        && param.ty == Type::Decimal
        && param.as_string
        && param.values.is_empty();
    if param.required {
        let v = value(&format!("self.{ident}"));
        return match param.location {
            ParamLocation::Body if amount => format!("w.amount({wire}, {v})?;"),
            ParamLocation::Body if amount_text => format!("w.amount_text({wire}, &self.{ident})?;"),
            ParamLocation::Path => format!("w.path({wire}, {v})?;"),
            ParamLocation::Query => format!("w.query({wire}, {v});"),
            ParamLocation::Body => format!("w.body({wire}, {v})?;"),
            ParamLocation::Header => format!("w.header({wire}, {v})?;"),
        };
    }
    // Optional: the runtime's `_opt` calls skip an absent value.
    if date && param.location != ParamLocation::Header {
        let text = format!("self.{ident}.as_ref().map(|v| v.to_wire(rt::DateLayout::{layout}))");
        return match param.location {
            ParamLocation::Body => format!("w.body_opt({wire}, {text}.as_ref())?;"),
            _ => format!("w.query_opt({wire}, {text}.as_ref());"),
        };
    }
    match param.location {
        ParamLocation::Query if param.ty == Type::StringList => {
            format!("w.query_opt({wire}, self.{ident}.as_ref().map(|v| v.join(\",\")).as_ref());")
        }
        ParamLocation::Query if secret => {
            format!("w.query_opt({wire}, self.{ident}.as_ref().map(|v| v.expose()));")
        }
        ParamLocation::Query => format!("w.query_opt({wire}, self.{ident}.as_ref());"),
        ParamLocation::Body if amount_text => format!("w.amount_text_opt({wire}, self.{ident}.as_ref())?;"),
        ParamLocation::Body if param.as_string => {
            format!("w.body_opt({wire}, self.{ident}.as_ref().map(|v| v.to_string()).as_ref())?;")
        }
        ParamLocation::Body if amount => format!("w.amount_opt({wire}, self.{ident}.as_ref())?;"),
        ParamLocation::Body => format!("w.body_opt({wire}, self.{ident}.as_ref())?;"),
        ParamLocation::Header => {
            let v = value("v");
            format!("if let Some(v) = &self.{ident} {{ w.header({wire}, {v})?; }}")
        }
        // Validation makes every path parameter required.
        ParamLocation::Path => String::new(),
    }
}
