//! How a word holds its text and lists ([`Form`]): borrowed for the life of the program
//! ([`Static`], what generated code writes) or owned ([`Owned`], what a loaded spec holds).

use std::fmt::Debug;
use std::ops::Deref;

/// What a value of a [`Form`] may hold: anything plain, comparable and shareable.
pub trait Plain: Clone + Debug + PartialEq + Eq + Send + Sync + 'static {}

impl<T: Clone + Debug + PartialEq + Eq + Send + Sync + 'static> Plain for T {}

/// How a word holds its text, its lists and the words it points at.
pub trait Form: Plain + Copy + Default {
    /// Text.
    type Text: Plain + Deref<Target = str>;
    /// A list.
    type List<T: Plain>: Plain + Deref<Target = [T]>;
    /// Another word, held by reference.
    type Ref<T: Plain>: Plain + Deref<Target = T>;
}

/// The form generated code writes as constants: text, lists and words borrowed for the life
/// of the program.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Static;

impl Form for Static {
    type Text = &'static str;
    type List<T: Plain> = &'static [T];
    type Ref<T: Plain> = &'static T;
}

/// The form a spec loaded at run time holds: text and lists owned, words shared.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Owned;

impl Form for Owned {
    type Text = String;
    type List<T: Plain> = Vec<T>;
    type Ref<T: Plain> = std::sync::Arc<T>;
}
