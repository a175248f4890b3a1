//! Routes: a path template, parsed once, and each route of an operation.

use std::fmt;

/// A path such as `/v2/transfers/bank/{subAccountId}`, split into segments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathTemplate {
    text: String,
    segments: Vec<Segment>,
}

/// One segment of a path template.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Segment {
    /// Fixed text.
    Literal(String),
    /// A `{variable}`.
    Variable(String),
}

impl PathTemplate {
    /// Parses a template, or says what is wrong with it.
    pub fn parse(text: &str) -> Result<PathTemplate, String> {
        let Some(rest) = text.strip_prefix('/') else {
            return Err("a path must start with `/`".into());
        };
        if text.contains(['?', '#', ' ']) {
            return Err(
                "a path holds no query, fragment or space; put query values in `in: query` params".into()
            );
        }
        let mut segments = Vec::new();
        for part in rest.split('/') {
            if part.is_empty() {
                return Err("a path has no empty segment (`//` or a trailing `/`)".into());
            }
            if let Some(inner) = part.strip_prefix('{') {
                let Some(name) = inner.strip_suffix('}') else {
                    return Err(format!("segment `{part}` opens `{{` without closing it"));
                };
                if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                    return Err(format!("`{{{name}}}` is not a variable name: use letters, digits and `_`"));
                }
                if segments.contains(&Segment::Variable(name.to_owned())) {
                    return Err(format!("variable `{{{name}}}` appears twice"));
                }
                segments.push(Segment::Variable(name.to_owned()));
            } else if part.contains(['{', '}']) {
                return Err(format!(
                    "segment `{part}` mixes text and a variable; a variable takes a whole segment"
                ));
            } else {
                segments.push(Segment::Literal(part.to_owned()));
            }
        }
        Ok(PathTemplate { text: text.to_owned(), segments })
    }

    /// A path that failed to parse, kept as one literal so that loading can go on and
    /// report the other errors of the file.
    pub(crate) fn malformed(text: &str) -> PathTemplate {
        PathTemplate { text: text.to_owned(), segments: vec![Segment::Literal(text.to_owned())] }
    }

    /// The template as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Its segments.
    pub fn segments(&self) -> &[Segment] {
        &self.segments
    }

    /// Its variable names, in order.
    pub fn variables(&self) -> impl Iterator<Item = &str> {
        self.segments.iter().filter_map(|s| match s {
            Segment::Variable(name) => Some(name.as_str()),
            Segment::Literal(_) => None,
        })
    }

    /// The template with variable names erased: two routes with equal shapes receive the
    /// same requests.
    pub fn shape(&self) -> String {
        PathTemplate::shape_of(&self.text)
    }

    /// The shape of any path text, parsed or not (a vendor document's path may not be a
    /// template this loader takes): each `{variable}` written `{}`, so `/a/{x}` and `/a/{y}`
    /// are one route. What the loader, the audit, the OpenAPI reader and `find_route`
    /// compare routes by.
    pub fn shape_of(text: &str) -> String {
        let mut shape = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(open) = rest.find('{') {
            let Some(close) = rest[open..].find('}') else { break };
            shape.push_str(&rest[..open]);
            shape.push_str("{}");
            rest = &rest[open + close + 1..];
        }
        shape.push_str(rest);
        shape
    }

    /// The variable names of any path text, in order (see [`PathTemplate::shape_of`]).
    pub fn variables_of(text: &str) -> Vec<&str> {
        let mut names = Vec::new();
        let mut rest = text;
        while let Some(open) = rest.find('{') {
            let Some(close) = rest[open..].find('}') else { break };
            names.push(&rest[open + 1..open + close]);
            rest = &rest[open + close + 1..];
        }
        names
    }

    /// The value of each variable in a request's `path` (as sent: not decoded), when the
    /// path has this template's shape; what a server routes by.
    pub fn match_path<'p>(&self, path: &'p str) -> Option<Vec<(&str, &'p str)>> {
        let mut parts = path.strip_prefix('/')?.split('/');
        let mut values = Vec::new();
        for segment in &self.segments {
            let part = parts.next()?;
            match segment {
                Segment::Literal(text) if text == part => {}
                Segment::Literal(_) => return None,
                Segment::Variable(name) => values.push((name.as_str(), part)),
            }
        }
        if parts.next().is_some() { None } else { Some(values) }
    }

    /// How many of its segments are fixed text: of two templates a path fits, the one
    /// with more is meant (`/v1/accounts/balance` before `/v1/accounts/{id}`).
    pub fn literals(&self) -> usize {
        self.segments.iter().filter(|s| matches!(s, Segment::Literal(_))).count()
    }
}

impl fmt::Display for PathTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::PathTemplate;

    #[test]
    fn one_template_routes_shapes_and_names_variables() -> Result<(), String> {
        let template = PathTemplate::parse("/v1/accounts/{accountId}/balance")?;
        assert_eq!(template.shape(), "/v1/accounts/{}/balance");
        assert_eq!(PathTemplate::shape_of("/v1/accounts/{id}/balance?x={y}"), "/v1/accounts/{}/balance?x={}");
        assert_eq!(PathTemplate::variables_of("/a/{x}/b/{y}"), vec!["x", "y"]);
        assert_eq!(template.match_path("/v1/accounts/a%2Fb/balance"), Some(vec![("accountId", "a%2Fb")]));
        assert_eq!(template.match_path("/v1/accounts/x/balance/more"), None);
        assert_eq!(template.match_path("/v1/accounts/x"), None);
        assert_eq!(template.match_path("v1/accounts/x/balance"), None);
        assert_eq!(template.literals(), 3);
        Ok(())
    }
}
