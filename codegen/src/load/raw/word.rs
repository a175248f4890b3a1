//! The spec's closed sets of words (a method, an effect, a final state, a parameter's
//! place, ...), read from YAML straight into the types that define them: the vocabulary's
//! and the model's own, so that no word is spelled twice.

use std::fmt;
use std::marker::PhantomData;

use payspec_vocabulary::{Auth, Effect, FinalState, Method, TextFormat};
use serde::Deserialize;
use serde::de::{self, Deserializer, Visitor};

use crate::model::{FactSource, Origin, ParamLocation, ReadingSource};

/// A type whose values the spec writes as one word each.
pub trait Words: Copy + Sized + 'static {
    /// Each value a spec may write.
    const ALL: &'static [Self];
    /// Each value's word, in `ALL`'s order: what an unknown word is offered instead.
    const WORDS: &'static [&'static str];

    /// The value `word` names, if any.
    fn named(word: &str) -> Option<Self> {
        Self::WORDS.iter().position(|known| *known == word).map(|at| Self::ALL[at])
    }
}

/// A value read from its word; an unknown word is refused with the words allowed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Word<T>(pub T);

impl<'de, T: Words> Deserialize<'de> for Word<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct WordVisitor<T>(PhantomData<T>);
        impl<T: Words> Visitor<'_> for WordVisitor<T> {
            type Value = Word<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                write!(f, "one of {}", T::WORDS.join(", "))
            }
            fn visit_str<E: de::Error>(self, word: &str) -> Result<Self::Value, E> {
                T::named(word).map(Word).ok_or_else(|| E::unknown_variant(word, T::WORDS))
            }
        }
        deserializer.deserialize_str(WordVisitor(PhantomData))
    }
}

impl Words for Method {
    const ALL: &'static [Self] = &Method::ALL;
    const WORDS: &'static [&'static str] = &["GET", "POST", "PUT", "DELETE", "PATCH"];
}

impl Words for Effect {
    const ALL: &'static [Self] = &[Effect::Read, Effect::Write, Effect::Money];
    const WORDS: &'static [&'static str] = &["read", "write", "money"];
}

impl Words for FinalState {
    const ALL: &'static [Self] = &FinalState::ALL;
    const WORDS: &'static [&'static str] = &["succeeded", "failed", "refunded", "reversed"];
}

/// `any` is what no `format` says, so a spec does not write it.
impl Words for TextFormat {
    const ALL: &'static [Self] = &[TextFormat::Digits, TextFormat::Email, TextFormat::Name];
    const WORDS: &'static [&'static str] = &["digits", "email", "name"];
}

/// The format's own words; a credential of the service's is named by its key instead.
impl Words for Auth {
    const ALL: &'static [Self] =
        &[Auth::BearerAndAccount, Auth::Bearer, Auth::Account, Auth::Basic, Auth::None];
    const WORDS: &'static [&'static str] = &["bearer_and_account", "bearer", "account", "basic", "none"];
}

impl Words for ParamLocation {
    const ALL: &'static [Self] =
        &[ParamLocation::Path, ParamLocation::Query, ParamLocation::Body, ParamLocation::Header];
    const WORDS: &'static [&'static str] = &["path", "query", "body", "header"];
}

impl Words for Origin {
    const ALL: &'static [Self] =
        &[Origin::Interface, Origin::Reference, Origin::DeveloperDocs, Origin::Extension];
    const WORDS: &'static [&'static str] = &["interface", "reference", "developer_docs", "extension"];
}

impl Words for FactSource {
    const ALL: &'static [Self] = &[FactSource::Reference, FactSource::DeveloperDocs, FactSource::Observed];
    const WORDS: &'static [&'static str] = &["reference", "developer_docs", "observed"];
}

impl Words for ReadingSource {
    const ALL: &'static [Self] = &[
        ReadingSource::Reference,
        ReadingSource::DeveloperDocs,
        ReadingSource::Observed,
        ReadingSource::Inference,
    ];
    const WORDS: &'static [&'static str] = &["reference", "developer_docs", "observed", "inference"];
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each list's words are the words its type says for itself, in its order.
    fn spelled_as_defined<T: Words>(spoken: impl Fn(T) -> &'static str) {
        assert_eq!(T::ALL.len(), T::WORDS.len());
        for (value, word) in T::ALL.iter().zip(T::WORDS) {
            assert_eq!(spoken(*value), *word);
            assert_eq!(T::named(word).map(&spoken), Some(*word));
        }
        assert!(T::named("no such word").is_none());
    }

    #[test]
    fn every_word_is_the_one_its_type_defines() {
        spelled_as_defined::<Method>(Method::as_str);
        spelled_as_defined::<Effect>(Effect::as_str);
        spelled_as_defined::<FinalState>(FinalState::as_str);
        spelled_as_defined::<TextFormat>(TextFormat::as_str);
        spelled_as_defined::<Auth>(Auth::as_str);
        spelled_as_defined::<ParamLocation>(ParamLocation::as_str);
        spelled_as_defined::<Origin>(Origin::as_str);
        spelled_as_defined::<FactSource>(FactSource::as_str);
        spelled_as_defined::<ReadingSource>(ReadingSource::as_str);
    }

    #[test]
    fn an_unknown_word_is_refused_with_the_words_allowed() {
        let error = serde_yaml::from_str::<Word<Effect>>("spend").unwrap_err().to_string();
        assert!(
            error.contains("unknown variant `spend`, expected one of `read`, `write`, `money`"),
            "{error}"
        );
        assert_eq!(serde_yaml::from_str::<Word<Method>>("PATCH").unwrap().0, Method::Patch);
        assert!(serde_yaml::from_str::<Word<Method>>("get").is_err(), "a method is written as it travels");
    }
}
