//! How a value is written and where a payment ends: the layout of a date the service reads,
//! the format of a text it takes, and a payment's final state.

use std::fmt;

/// How a request writes a date and time: in UTC, in one of these layouts (the spec's
/// `layout` on a `date_time` parameter, named by its pattern). All but [`DateLayout::Instant`]
/// are read without an offset.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum DateLayout {
    /// `2023-01-01T00:00:00`, the default.
    #[default]
    Seconds,
    /// `2025-08-29T14:58` (seconds are dropped)
    Minutes,
    /// `2026-01-30 12:15:00`
    SpaceSeconds,
    /// `2025-06-24`: the date alone (the time of day is not sent)
    Date,
    /// `2023-09-08T00:00:00.000Z`: an ISO-8601 instant with milliseconds and `Z`, as a
    /// JavaScript `Date` writes it (the client holds seconds, so it writes `.000`)
    Instant,
}

impl DateLayout {
    /// Every layout, by the pattern the spec names it with.
    pub const ALL: [(&'static str, DateLayout); 5] = [
        ("YYYY-MM-DDThh:mm:ss", DateLayout::Seconds),
        ("YYYY-MM-DDThh:mm", DateLayout::Minutes),
        ("YYYY-MM-DD hh:mm:ss", DateLayout::SpaceSeconds),
        ("YYYY-MM-DD", DateLayout::Date),
        ("YYYY-MM-DDThh:mm:ss.sssZ", DateLayout::Instant),
    ];

    /// The layout as the pattern the spec names it with, and messages show:
    /// `YYYY-MM-DDThh:mm:ss`.
    pub fn pattern(self) -> &'static str {
        DateLayout::ALL.iter().find(|(_, layout)| *layout == self).map_or("", |(pattern, _)| pattern)
    }

    /// The layout a pattern names.
    pub fn of_pattern(pattern: &str) -> Option<DateLayout> {
        DateLayout::ALL.iter().find(|(known, _)| *known == pattern).map(|(_, layout)| *layout)
    }
}

/// A format the vendor states for a text value, checked before a request is sent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum TextFormat {
    /// Any text.
    #[default]
    Any,
    /// ASCII digits only (account numbers, bank codes).
    Digits,
    /// An email address: one `@`, something before it, a domain with a dot after it, no
    /// spaces.
    Email,
    /// A name as the service takes one: letters and spaces; no ASCII digit, punctuation
    /// or symbol (`-`, `'`, `.`, `&`, ...).
    Name,
}

impl TextFormat {
    /// The spec's word for it (`any` is what no `format` says).
    pub const fn as_str(self) -> &'static str {
        match self {
            TextFormat::Any => "any",
            TextFormat::Digits => "digits",
            TextFormat::Email => "email",
            TextFormat::Name => "name",
        }
    }
}

/// Where a payment ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FinalState {
    /// The money moved.
    Succeeded,
    /// The operation failed; the money did not move.
    Failed,
    /// The money was sent back to the payer.
    Refunded,
    /// A payment that had succeeded was undone.
    Reversed,
}

impl FinalState {
    /// Every final state.
    pub const ALL: [FinalState; 4] =
        [FinalState::Succeeded, FinalState::Failed, FinalState::Refunded, FinalState::Reversed];

    /// Its name, as the spec and messages say it: `succeeded`, `failed`, ...
    pub const fn as_str(self) -> &'static str {
        match self {
            FinalState::Succeeded => "succeeded",
            FinalState::Failed => "failed",
            FinalState::Refunded => "refunded",
            FinalState::Reversed => "reversed",
        }
    }
}

impl fmt::Display for FinalState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
