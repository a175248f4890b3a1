//! A word of either form written as the Rust source of its [`Static`](crate::Static)
//! constant, the runtime's path in front of each type (`rt::Answers { .. }`): what a
//! generator emits, following these definitions field by field.

use std::fmt::Write as _;

use crate::{
    Alias, Answers, Auth, Awaiting, BodyEncoding, DateLayout, Effect, EnvelopeKeys, EnvelopeKind, ErrorKeys,
    FinalState, Form, HmacDigest, Method, PageStyle, SignatureEncoding, SignedOver, SignedValue, SuccessBy,
    TextFormat, WebhookScheme,
};

/// Writes itself as a Rust expression of the `Static` form.
pub trait Rust {
    /// Appends the expression to `out`; `rt` is the path the runtime is named by in the
    /// generated source (`rt`, `::payspec_runtime`).
    fn write(&self, out: &mut String, rt: &str);
}

/// `value` as a Rust expression, the runtime named `rt`.
pub fn value(value: &impl Rust, rt: &str) -> String {
    let mut out = String::new();
    value.write(&mut out, rt);
    out
}

impl Rust for str {
    fn write(&self, out: &mut String, _: &str) {
        // Debug of a `str` is a Rust string literal: quotes, backslashes and controls escaped.
        let _ = write!(out, "{self:?}");
    }
}

impl Rust for String {
    fn write(&self, out: &mut String, rt: &str) {
        self.as_str().write(out, rt);
    }
}

impl Rust for bool {
    fn write(&self, out: &mut String, _: &str) {
        let _ = write!(out, "{self}");
    }
}

impl Rust for usize {
    fn write(&self, out: &mut String, _: &str) {
        let _ = write!(out, "{self}");
    }
}

impl Rust for u32 {
    fn write(&self, out: &mut String, _: &str) {
        let _ = write!(out, "{self}");
    }
}

impl<T: Rust> Rust for Option<T> {
    fn write(&self, out: &mut String, rt: &str) {
        match self {
            Some(value) => {
                out.push_str("Some(");
                value.write(out, rt);
                out.push(')');
            }
            None => out.push_str("None"),
        }
    }
}

impl<A: Rust, B: Rust> Rust for (A, B) {
    fn write(&self, out: &mut String, rt: &str) {
        out.push('(');
        self.0.write(out, rt);
        out.push_str(", ");
        self.1.write(out, rt);
        out.push(')');
    }
}

impl<T: Rust> Rust for [T] {
    fn write(&self, out: &mut String, rt: &str) {
        out.push_str("&[");
        for (i, item) in self.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            item.write(out, rt);
        }
        out.push(']');
    }
}

impl<T: Rust> Rust for Vec<T> {
    fn write(&self, out: &mut String, rt: &str) {
        self.as_slice().write(out, rt);
    }
}

/// A fieldless word: its path and variant, as its `Debug` names it.
macro_rules! fieldless {
    ($($word:ident),*) => {$(
        impl Rust for $word {
            fn write(&self, out: &mut String, rt: &str) {
                let _ = write!(out, "{rt}::{}::{self:?}", stringify!($word));
            }
        }
    )*};
}

fieldless!(
    Method,
    Auth,
    BodyEncoding,
    Effect,
    DateLayout,
    TextFormat,
    FinalState,
    HmacDigest,
    SignatureEncoding,
    SignedOver,
    SuccessBy
);

/// A struct word: `rt::Name { field: value, .. }`.
macro_rules! fields {
    ($out:ident, $rt:ident, $name:literal, $($field:ident: $value:expr),* $(,)?) => {{
        let _ = write!($out, "{}::{} {{ ", $rt, $name);
        $(
            $out.push_str(concat!(stringify!($field), ": "));
            $value.write($out, $rt);
            $out.push_str(", ");
        )*
        $out.push('}');
    }};
}

impl<F: Form> Rust for Answers<F>
where
    F::Text: Rust,
{
    fn write(&self, out: &mut String, rt: &str) {
        fields!(out, rt, "Answers",
            success_codes: &*self.success_codes,
            refusal_codes: &*self.refusal_codes,
            status_field: &*self.status_field,
            success_statuses: &*self.success_statuses,
            pending_statuses: &*self.pending_statuses,
            failed_statuses: &*self.failed_statuses,
            pending_descriptions: &*self.pending_descriptions,
            pending_codes: &*self.pending_codes,
            awaiting: &*self.awaiting,
            reference_taken: &*self.reference_taken,
            envelope: self.envelope,
            errors: self.errors.as_deref().map(Borrowed),
            secret_values: self.secret_values,
        );
    }
}

/// A word written as a reference to its constant (`&rt::ErrorKeys { .. }`), as a word held
/// by [`Form::Ref`] is.
struct Borrowed<'a, T: ?Sized>(&'a T);

impl<T: Rust + ?Sized> Rust for Borrowed<'_, T> {
    fn write(&self, out: &mut String, rt: &str) {
        out.push('&');
        self.0.write(out, rt);
    }
}

impl<F: Form> Rust for ErrorKeys<F>
where
    F::Text: Rust,
{
    fn write(&self, out: &mut String, rt: &str) {
        fields!(out, rt, "ErrorKeys",
            at: self.at.as_deref(),
            code: &*self.code,
            description: &*self.description,
        );
    }
}

impl<F: Form> Rust for Awaiting<F>
where
    F::Text: Rust,
{
    fn write(&self, out: &mut String, rt: &str) {
        fields!(out, rt, "Awaiting", field: &*self.field, contains: &*self.contains, awaits: &*self.awaits);
    }
}

impl<F: Form> Rust for EnvelopeKind<F>
where
    F::Text: Rust,
{
    fn write(&self, out: &mut String, rt: &str) {
        match self {
            EnvelopeKind::Wrapped { keys, spelling } => {
                let _ = write!(out, "{rt}::EnvelopeKind::Wrapped {{ keys: &");
                (**keys).write(out, rt);
                let _ = write!(out, ", spelling: {spelling} }}");
            }
            EnvelopeKind::Unwrapped => {
                let _ = write!(out, "{rt}::EnvelopeKind::Unwrapped");
            }
        }
    }
}

impl<F: Form> Rust for EnvelopeKeys<F>
where
    F::Text: Rust,
{
    fn write(&self, out: &mut String, rt: &str) {
        fields!(out, rt, "EnvelopeKeys",
            success: self.success,
            code: &*self.code,
            description: &*self.description,
            data: &*self.data,
            flag: self.flag.as_deref(),
        );
    }
}

impl<F: Form> Rust for Alias<F>
where
    F::Text: Rust,
{
    fn write(&self, out: &mut String, rt: &str) {
        fields!(out, rt, "Alias", method: self.method, path: &*self.path, note: &*self.note);
    }
}

impl<F: Form> Rust for PageStyle<F>
where
    F::Text: Rust,
{
    fn write(&self, out: &mut String, rt: &str) {
        match self {
            PageStyle::Cursor { next } => fields!(out, rt, "PageStyle::Cursor", next: &**next),
            PageStyle::Page { next, current } => {
                fields!(out, rt, "PageStyle::Page", next: &**next, current: &**current)
            }
            PageStyle::PageSize { more, last, current, total, first } => {
                fields!(out, rt, "PageStyle::PageSize", more: &**more, last: *last, current: &**current, total: &**total, first: *first)
            }
            PageStyle::After { more, last, records, id } => {
                fields!(out, rt, "PageStyle::After", more: &**more, last: *last, records: &**records, id: &**id)
            }
        }
    }
}

impl<F: Form> Rust for WebhookScheme<F>
where
    F::Text: Rust,
{
    fn write(&self, out: &mut String, rt: &str) {
        fn pair<T: std::ops::Deref<Target = str>>(pair: &Option<(T, T)>) -> Option<(&str, &str)> {
            pair.as_ref().map(|(a, b)| (&**a, &**b))
        }
        fields!(out, rt, "WebhookScheme",
            signature_header: &*self.signature_header,
            signature_field: self.signature_field.as_deref(),
            time_field: self.time_field.as_deref(),
            digest: &self.digest,
            encoding: &self.encoding,
            signs: &self.signs,
            timestamp_header: self.timestamp_header.as_deref(),
            tolerance_seconds: self.tolerance_seconds,
            algorithm: pair(&self.algorithm),
            version: pair(&self.version),
            event_type: &*self.event_type,
            request_id: &*self.request_id,
            signed: &*self.signed,
        );
    }
}

impl<F: Form> Rust for SignedValue<F>
where
    F::Text: Rust,
{
    fn write(&self, out: &mut String, rt: &str) {
        fields!(out, rt, "SignedValue", name: &*self.name, path: &*self.path, instant: self.instant);
    }
}

impl<T: Rust + ?Sized> Rust for &T {
    fn write(&self, out: &mut String, rt: &str) {
        (**self).write(out, rt);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Owned, Static};

    #[test]
    fn a_word_is_written_as_the_constant_it_is() {
        static KEYS: EnvelopeKeys = EnvelopeKeys {
            success: SuccessBy::Code,
            code: &["code", "responseCode"],
            description: &["description"],
            data: "data",
            flag: None,
        };
        let answers: Answers = Answers {
            success_codes: &["00", "a \"quoted\" code"],
            envelope: EnvelopeKind::Wrapped { keys: &KEYS, spelling: 1 },
            awaiting: &[Awaiting { field: "message", contains: "OTP", awaits: "the OTP" }],
            ..Answers::PLAIN
        };
        let text = value(&answers, "rt");
        assert!(
            text.starts_with("rt::Answers { success_codes: &[\"00\", \"a \\\"quoted\\\" code\"], "),
            "{text}"
        );
        assert!(text.contains("envelope: rt::EnvelopeKind::Wrapped { keys: &rt::EnvelopeKeys { success: rt::SuccessBy::Code, code: &[\"code\", \"responseCode\"], description: &[\"description\"], data: \"data\", flag: None, }, spelling: 1 }"), "{text}");
        assert!(
            text.contains(
                "awaiting: &[rt::Awaiting { field: \"message\", contains: \"OTP\", awaits: \"the OTP\", }]"
            ),
            "{text}"
        );
        // The owned form writes the same constant.
        let owned: Answers<Owned> = Answers {
            success_codes: vec!["00".to_owned(), "a \"quoted\" code".to_owned()],
            envelope: EnvelopeKind::Wrapped {
                keys: std::sync::Arc::new(EnvelopeKeys {
                    success: SuccessBy::Code,
                    code: vec!["code".to_owned(), "responseCode".to_owned()],
                    description: vec!["description".to_owned()],
                    data: "data".to_owned(),
                    flag: None,
                }),
                spelling: 1,
            },
            awaiting: vec![Awaiting {
                field: "message".to_owned(),
                contains: "OTP".to_owned(),
                awaits: "the OTP".to_owned(),
            }],
            ..Answers::plain()
        };
        assert_eq!(value(&owned, "rt"), text);
        let _: &Answers<Static> = &answers;
        assert_eq!(value(&Method::Post, "rt"), "rt::Method::Post");
        let style: PageStyle = PageStyle::Page { next: "nextPage", current: &["page", "currentPage"] };
        assert_eq!(
            value(&style, "rt"),
            "rt::PageStyle::Page { next: \"nextPage\", current: &[\"page\", \"currentPage\"], }"
        );
    }
}
