//! The words a payspec spec is written in, defined once for the generator, the runtime and
//! the sandbox: how an operation is sent ([`Method`], [`Auth`], [`Effect`], [`Alias`]), how
//! its answers are read ([`Answers`], [`EnvelopeKind`], [`EnvelopeKeys`], [`Awaiting`]), how a
//! listing pages ([`PageStyle`]), how a value is written ([`DateLayout`], [`TextFormat`]),
//! where a payment ends ([`FinalState`]), how a webhook is signed ([`WebhookScheme`],
//! [`SignedValue`]), and the sandbox's stateful behaviours an operation may play ([`ROLES`]).
//!
//! A word that carries text or lists is generic over its [`Form`]: [`Static`], the form
//! generated code writes as constants and the runtime reads (`&'static str`,
//! `&'static [T]`, the default), or [`Owned`], the form a spec loaded at run time holds
//! (`String`, `Vec<T>`). [`rust`] writes any of them as the Rust source of the `Static`
//! constant, so generated code follows these definitions without a mapping of its own.
//!
//! ```
//! use payspec_vocabulary::{Answers, EnvelopeKind, Owned, Static};
//!
//! // What generated code declares...
//! const READ: Answers = Answers { success_codes: &["00"], ..Answers::PLAIN };
//! // ...and what a generator holds, written back as that constant's source.
//! let loaded: Answers<Owned> = Answers { success_codes: vec!["00".to_owned()], ..Answers::plain() };
//! assert_eq!(loaded.success_codes, READ.success_codes);
//! assert!(payspec_vocabulary::rust::value(&loaded, "rt").contains(r#"success_codes: &["00"]"#));
//! let _: EnvelopeKind<Static> = READ.envelope;
//! ```

#![warn(missing_docs)]

mod answers;
mod form;
mod operation;
mod pages;
mod role;
pub mod rust;
mod values;
mod webhook;

pub use answers::{Answers, Awaiting, EnvelopeKeys, EnvelopeKind, ErrorKeys, SuccessBy};
pub use form::{Form, Owned, Plain, Static};
pub use operation::{Alias, Auth, BodyEncoding, Effect, Method};
pub use pages::PageStyle;
pub use role::{ROLES, Role, role};
pub use values::{DateLayout, FinalState, TextFormat};
pub use webhook::{HmacDigest, SignatureEncoding, SignedOver, SignedValue, WebhookScheme};
