//! Rust source text as the emitters write it: a growing string that `write!` appends to,
//! doc comments, and escaped string literals.

use std::fmt;

/// Rust source being written. `write!` on it cannot fail, so the emitters need no `?`.
pub(super) struct Code(String);

impl Code {
    pub(super) fn with_capacity(bytes: usize) -> Code {
        Code(String::with_capacity(bytes))
    }

    /// Source written after `start`, with room for `bytes` more.
    pub(super) fn after(mut start: String, bytes: usize) -> Code {
        start.reserve(bytes);
        Code(start)
    }

    /// What `write!(code, ...)` calls.
    pub(super) fn write_fmt(&mut self, args: fmt::Arguments<'_>) {
        // Writing into a `String` fails only when a `Display` impl does, and none of the
        // values written here has one that can.
        let _ = fmt::Write::write_fmt(&mut self.0, args);
    }

    pub(super) fn push(&mut self, text: &str) {
        self.0.push_str(text);
    }

    /// Documentation, one line per element: a `///` comment, or a `#[doc]` attribute with
    /// an escaped literal for a line that a comment cannot carry.
    pub(super) fn doc<S: AsRef<str>>(&mut self, indent: &str, lines: &[S]) {
        let mut fenced = false;
        for line in lines {
            let line = line.as_ref();
            if line.trim_start().starts_with("```") {
                fenced = !fenced;
                self.doc_text(indent, line);
            } else if fenced {
                self.doc_text(indent, line);
            } else {
                self.doc_line(indent, line);
            }
        }
    }

    /// One line of documentation (see [`Code::doc`]), prose: a `<` outside a code span is
    /// escaped, so that spec text such as `transactionRef=<merchant reference>` stays text
    /// and is never read as an HTML tag (which rustdoc refuses).
    pub(super) fn doc_line(&mut self, indent: &str, line: &str) {
        if line.contains('<') {
            self.doc_text(indent, &escape_angles(line));
        } else {
            self.doc_text(indent, line);
        }
    }

    /// One line of documentation, as it is.
    fn doc_text(&mut self, indent: &str, line: &str) {
        self.push(indent);
        if !comment_can_carry(line) {
            let text = format!(" {line}");
            writeln!(self, "#[doc = {}]", Lit(&text));
        } else if line.is_empty() {
            self.push("///\n");
        } else {
            self.push("/// ");
            self.push(line);
            self.push("\n");
        }
    }

    pub(super) fn into_string(self) -> String {
        self.0
    }

    /// What `write` emits, each item at `indent` (a module's items) under `attr` (a
    /// `#[cfg(...)]`), or as it is without one. The attribute is written once an item, at
    /// the first line of its header: its doc comments and attributes, then the item.
    pub(super) fn gated(&mut self, attr: Option<&str>, indent: &str, write: impl FnOnce(&mut Code)) {
        let Some(attr) = attr else {
            write(self);
            return;
        };
        let mut items = Code::with_capacity(1 << 12);
        write(&mut items);
        // Whether the lines since the last item's start are its header (docs, attributes).
        let mut in_header = false;
        for line in items.0.split_inclusive('\n') {
            let at_item_level =
                line.strip_prefix(indent).filter(|rest| !rest.starts_with(char::is_whitespace));
            let (header, item) = match at_item_level {
                Some(rest) if rest.starts_with("///") || rest.starts_with("#[") => (true, false),
                Some(rest) => (false, ITEM_STARTS.iter().any(|start| rest.starts_with(start))),
                None => (false, false),
            };
            if (header || item) && !in_header {
                self.push(indent);
                self.push(attr);
                self.push("\n");
            }
            if header {
                in_header = true;
            } else if item {
                in_header = false;
            }
            self.push(line);
        }
    }
}

/// `line` with each `<` outside a code span (between backticks) escaped as `\<`.
fn escape_angles(line: &str) -> String {
    let mut out = String::with_capacity(line.len() + 8);
    for (i, part) in line.split('`').enumerate() {
        if i > 0 {
            out.push('`');
        }
        if i % 2 == 0 {
            out.push_str(&part.replace('<', "\\<"));
        } else {
            out.push_str(part);
        }
    }
    out
}

/// `Some("text")` or `None`: an optional string literal of generated code.
pub(super) fn opt_lit(text: Option<&str>) -> String {
    text.map_or_else(|| "None".to_owned(), |text| format!("Some({})", Lit(text)))
}

/// How a line at a module's item indentation starts when it starts an item: where
/// [`Code::gated`] ends an item's header (its doc comments and attributes, before which it
/// puts its attribute once). The emitters write one item a line at that indentation, and
/// the lines inside an item deeper.
const ITEM_STARTS: [&str; 11] =
    ["pub ", "impl", "fn ", "struct ", "enum ", "const ", "static ", "mod ", "use ", "type ", "trait "];

/// Whether a `///` comment can hold `line` as it is: no control character (a carriage
/// return is refused in a doc comment, a line break would end it) and no character that
/// changes the direction of text, which the compiler refuses in comments by default.
fn comment_can_carry(line: &str) -> bool {
    if line.bytes().all(|b| matches!(b, b' '..=b'~')) {
        return true;
    }
    !line.chars().any(|c| {
        c.is_control()
            || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    })
}

/// A Rust string literal holding the text: `"..."` with quotes, backslashes and control
/// characters escaped.
#[derive(Clone, Copy)]
pub(super) struct Lit<'a>(pub(super) &'a str);

impl fmt::Display for Lit<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // `str`'s `Debug` writes exactly a Rust string literal.
        write!(f, "{:?}", self.0)
    }
}

/// String literals separated by commas: `"a", "b"`.
pub(super) fn literals(values: &[String]) -> impl fmt::Display + '_ {
    join(values, ", ", |f, value| write!(f, "{}", Lit(value)))
}

/// Items separated by `sep`, each written by `each`: `a, b, c` without a trailing one.
pub(super) fn join<I, F>(items: I, sep: &'static str, each: F) -> Joined<I, F>
where
    I: IntoIterator + Clone,
    F: Fn(&mut fmt::Formatter<'_>, I::Item) -> fmt::Result,
{
    Joined { items, sep, each }
}

/// What [`join`] returns.
pub(super) struct Joined<I, F> {
    items: I,
    sep: &'static str,
    each: F,
}

impl<I, F> fmt::Display for Joined<I, F>
where
    I: IntoIterator + Clone,
    F: Fn(&mut fmt::Formatter<'_>, I::Item) -> fmt::Result,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, item) in self.items.clone().into_iter().enumerate() {
            if i > 0 {
                f.write_str(self.sep)?;
            }
            (self.each)(f, item)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doc_lines_are_comments_unless_a_comment_cannot_carry_them() {
        let mut code = Code::with_capacity(0);
        code.doc("    ", &["one", "", "two\rthree", "é\tx", "a\u{202e}b"]);
        assert_eq!(
            code.into_string(),
            "    /// one\n    ///\n    #[doc = \" two\\rthree\"]\n    #[doc = \" é\\tx\"]\n    #[doc = \" a\\u{202e}b\"]\n"
        );
    }

    #[test]
    fn literals_escape_what_a_string_literal_must() {
        assert_eq!(Lit("a\"b\\c\n\u{7}é").to_string(), "\"a\\\"b\\\\c\\n\\u{7}é\"");
    }

    #[test]
    fn a_gated_item_carries_its_attribute_once_before_its_docs_and_attributes() {
        let mut code = Code::with_capacity(64);
        code.gated(Some("#[cfg(feature = \"g\")]"), "    ", |out| {
            out.push("    /// A request.\n    #[derive(Clone)]\n    #[non_exhaustive]\n    pub struct A {\n        pub x: u8,\n    }\n");
            out.push("    impl A {\n        #[must_use]\n        pub fn new() -> Self { A { x: 0 } }\n    }\n");
        });
        assert_eq!(
            code.into_string(),
            "    #[cfg(feature = \"g\")]\n    /// A request.\n    #[derive(Clone)]\n    #[non_exhaustive]\n    pub struct A {\n        pub x: u8,\n    }\n    #[cfg(feature = \"g\")]\n    impl A {\n        #[must_use]\n        pub fn new() -> Self { A { x: 0 } }\n    }\n"
        );
    }

    #[test]
    fn prose_angles_are_escaped_and_code_is_left_as_it_is() {
        let mut code = Code::with_capacity(64);
        code.doc(
            "",
            &[
                "asks transactionRef=<merchant reference>, not `Vec<u8>`",
                "```",
                "let x: Result<(), Error> = Ok(());",
                "```",
            ],
        );
        assert_eq!(
            code.into_string(),
            "/// asks transactionRef=\\<merchant reference>, not `Vec<u8>`\n/// ```\n/// let x: Result<(), Error> = Ok(());\n/// ```\n"
        );
    }

    #[test]
    fn join_separates_without_a_trailing_separator() {
        let text = join([1, 2, 3], ", ", |f, n| write!(f, "#{n}")).to_string();
        assert_eq!(text, "#1, #2, #3");
        assert_eq!(join(Vec::<u8>::new(), ", ", |f, n| write!(f, "{n}")).to_string(), "");
    }
}
