//! Source text from tokens without a formatter: one item, field or statement per line,
//! indented by nesting. It costs one pass over the tokens, where parsing them back with syn
//! and printing with prettyplease cost several times the whole generation; the compiler
//! reads it all the same, and its messages point at readable lines.

use proc_macro2::{Delimiter, Spacing, TokenStream, TokenTree};

/// Appends the source of `tokens` to `out`.
pub(super) fn write(tokens: TokenStream, out: &mut String) {
    Writer { out, line_start: true, joint: false, word: false, colon: false }.stream(tokens, 0, true);
    if !out.ends_with('\n') {
        out.push('\n');
    }
}

struct Writer<'a> {
    out: &'a mut String,
    /// Nothing written on the current line yet.
    line_start: bool,
    /// The last token was a punctuation joined to the next (`:` of `::`, `'` of `'a`).
    joint: bool,
    /// The last token was a word, a literal or a closing delimiter (no space before a `(`,
    /// `,`, `:`, `.` or `?` after it).
    word: bool,
    /// The last token was the first `:` of a `::`.
    colon: bool,
}

impl Writer<'_> {
    /// Writes a stream; `block` says whether it is the inside of braces (or the file), where
    /// a `,` or `;` ends a line.
    fn stream(&mut self, tokens: TokenStream, depth: usize, block: bool) {
        let mut tokens = tokens.into_iter().peekable();
        while let Some(token) = tokens.next() {
            match token {
                TokenTree::Punct(p) if p.as_char() == '#' && self.line_start_or_block(block) => {
                    // An attribute: `#` and its bracket, on a line of their own.
                    self.newline_if_needed();
                    self.text(depth, "#");
                    self.joint = true;
                    if let Some(TokenTree::Group(group)) = tokens.next() {
                        self.group_inline(&group, depth);
                    }
                    self.end_line();
                }
                TokenTree::Punct(p) if block && matches!(p.as_char(), ';' | ',') => {
                    self.out.push(p.as_char());
                    self.end_line();
                }
                TokenTree::Punct(p) => {
                    let c = p.as_char();
                    if self.word && matches!(c, ',' | ';' | ':' | '.' | '?' | '<' | '>') {
                        self.joint = true;
                    }
                    let after_joint_colon = self.colon;
                    let mut buf = [0; 4];
                    self.text(depth, c.encode_utf8(&mut buf));
                    let joint = p.spacing() == Spacing::Joint;
                    self.colon = c == ':' && joint;
                    // No space after `.`, `&`, `<` or a whole `::`.
                    self.joint = joint || matches!(c, '.' | '&' | '<') || (c == ':' && after_joint_colon);
                    self.word = false;
                }
                TokenTree::Group(group) if group.delimiter() == Delimiter::Brace => {
                    self.text(depth, "{");
                    self.end_line();
                    self.stream(group.stream(), depth + 1, true);
                    self.newline_if_needed();
                    self.text(depth, "}");
                    self.word = true;
                    // A block ends its line, unless `;`, `,`, `.` or `)` follows.
                    let continues = matches!(
                        tokens.peek(),
                        Some(TokenTree::Punct(p)) if matches!(p.as_char(), ';' | ',' | '.' | '?')
                    );
                    if block && !continues {
                        self.end_line();
                    }
                }
                TokenTree::Group(group) => self.group_inline(&group, depth),
                TokenTree::Ident(ident) => {
                    self.display(depth, &ident);
                    self.joint = false;
                    self.word = true;
                }
                TokenTree::Literal(literal) => {
                    self.display(depth, &literal);
                    self.joint = false;
                    self.word = true;
                }
            }
        }
    }

    fn line_start_or_block(&self, block: bool) -> bool {
        block || self.line_start
    }

    /// A parenthesized or bracketed group, on the current line (braces inside it still
    /// open lines of their own).
    fn group_inline(&mut self, group: &proc_macro2::Group, depth: usize) {
        let (open, close) = match group.delimiter() {
            Delimiter::Parenthesis => ("(", ")"),
            Delimiter::Bracket => ("[", "]"),
            Delimiter::Brace => ("{", "}"),
            Delimiter::None => ("", ""),
        };
        if self.word {
            self.joint = true;
        }
        self.text(depth, open);
        self.joint = true;
        self.word = false;
        self.stream(group.stream(), depth + 1, false);
        self.joint = true;
        self.text(depth, close);
        self.joint = false;
        self.word = true;
    }

    /// Writes a token, with a space before it unless it starts a line, follows a joined
    /// punctuation or an opening delimiter, or is a closing one.
    /// Writes an identifier or literal straight into the output (no text of its own).
    fn display(&mut self, depth: usize, token: &dyn std::fmt::Display) {
        self.text(depth, "");
        let _ = std::fmt::Write::write_fmt(self.out, format_args!("{token}"));
    }

    fn text(&mut self, depth: usize, text: &str) {
        if self.line_start {
            for _ in 0..depth {
                self.out.push_str("    ");
            }
            self.line_start = false;
        } else if !self.joint && !matches!(text, ")" | "]") {
            self.out.push(' ');
        }
        self.out.push_str(text);
    }

    fn end_line(&mut self) {
        self.out.push('\n');
        self.line_start = true;
        self.joint = false;
        self.word = false;
    }

    fn newline_if_needed(&mut self) {
        if !self.line_start {
            self.end_line();
        }
    }
}
