//! `payspec import`: a draft spec from a vendor's OpenAPI 3.0 or 3.1 document. Every
//! operation of the document becomes one of the spec's (its route, parameters, request
//! body, answer), its schemas shapes, its security schemes credentials, its servers
//! environments, in the spec's own names and case. What a spec needs and the document does
//! not say is drafted where the document shows it (`infer`: an envelope every answer shares,
//! a listing's page pair or cursor, an idempotency header) and otherwise left to the author
//! as one commented choice per convention, naming the keys to write. What cannot be
//! imported is listed with its place ([`Unimported`]), never dropped silently.
//!
//! Its rooms: `draft` (the spec before it is written), `names` (the spec's names),
//! `schema` (types and shapes), `infer` (the conventions), `operations` (each operation),
//! `answers` (its answer and paging), and `write` (the YAML).

mod answers;
mod draft;
mod infer;
mod names;
mod operations;
mod schema;
mod write;

pub use draft::{Draft, Unimported};

use super::document::DocumentError;
use super::read::open_document;
use super::text::locate;
use crate::model::Location;
use draft::{Credential, Envelope, Service};
use names::Taken;
use schema::{Schemas, one_line};
use serde_json::Value;

/// How many places get a line and column (each is a search of the text); past this they
/// are reported by pointer alone, so a huge document is not searched over and over.
const MAX_LOCATED: usize = 256;

/// Drafts a spec from a document's text (JSON or YAML). `file` names it in the draft's
/// head comment and in what could not be imported. A text that is no OpenAPI 3.x document
/// is a [`DocumentError`]; anything inside one that cannot be imported is listed in
/// [`Draft::unimported`] with its place.
pub fn import(file: &str, text: &str) -> Result<Draft, DocumentError> {
    let (root, version) = open_document(file, text)?;
    let mut importer = Importer {
        file,
        text,
        root: &root,
        schemas: Schemas::new(&root),
        unimported: Vec::new(),
        inferred: Vec::new(),
        located: 0,
    };
    let service = importer.service();
    let mut operations = importer.operations();
    let envelope = importer.envelope(&operations);
    let mut spec = importer.draft(service, &mut operations, envelope);
    importer.schemas.break_cycles();
    let notes = std::mem::take(&mut importer.schemas.notes);
    for (pointer, what) in notes {
        importer.unimported(&pointer, "", what);
    }
    spec.shapes = std::mem::take(&mut importer.schemas.shapes);
    let (yaml, left_out) = write::spec(&spec, file, &version);
    for &i in &left_out {
        let op = &spec.operations[i];
        let what = format!(
            "{} {}: the draft would be larger than the {} bytes a spec may have; import the document by parts (its tags)",
            op.method,
            op.path,
            crate::load::MAX_SPEC_BYTES
        );
        importer.unimported(&op.pointer, "", what);
    }
    Ok(Draft {
        yaml,
        unimported: importer.unimported,
        inferred: importer.inferred,
        operations: spec.operations.len() - left_out.len(),
        shapes: spec.shapes.len(),
    })
}

/// One operation of the document, as found: its path key, method, and its object.
struct Found<'a> {
    key: String,
    method: crate::model::Method,
    operation: &'a Value,
    shared: &'a Value,
    pointer: String,
}

struct Importer<'a> {
    file: &'a str,
    text: &'a str,
    root: &'a Value,
    schemas: Schemas<'a>,
    unimported: Vec<Unimported>,
    inferred: Vec<String>,
    located: usize,
}

impl<'a> Importer<'a> {
    /// Lists a construct not imported: its pointer, and `needle` to locate it by.
    pub(super) fn unimported(&mut self, pointer: &str, needle: &str, what: String) {
        let location = self.locate(needle);
        self.unimported.push(Unimported {
            file: self.file.to_owned(),
            location,
            pointer: pointer.to_owned(),
            what,
        });
    }

    /// Where `needle` first stands in the text, while fewer than [`MAX_LOCATED`] were looked up.
    pub(super) fn locate(&mut self, needle: &str) -> Option<Location> {
        if needle.is_empty() || self.located >= MAX_LOCATED {
            return None;
        }
        self.located += 1;
        locate(self.text, needle)
    }

    /// The title, the servers as environments, and the security schemes as credentials.
    fn service(&mut self) -> Service {
        let title = one_line(self.root.pointer("/info/title").and_then(Value::as_str))
            .unwrap_or_else(|| "Imported service".to_owned());
        let mut environments = Vec::new();
        let mut taken = Taken::default();
        taken.reserve("custom");
        let servers = self.root.get("servers").and_then(Value::as_array).cloned().unwrap_or_default();
        for (i, server) in servers.iter().enumerate() {
            let pointer = format!("/servers/{i}");
            let Some(url) = server.get("url").and_then(Value::as_str) else { continue };
            let url = server_url(url, server);
            if !(url.starts_with("https://") || url.starts_with("http://")) || url.contains('{') {
                self.unimported(
                    &pointer,
                    &url,
                    format!("the server `{url}` is not an absolute http(s) URL; write its base URL under `service.environments`"),
                );
                continue;
            }
            // Its description's first word (`Production`), else its host's first label.
            let described =
                server.get("description").and_then(Value::as_str).and_then(|d| d.split_whitespace().next());
            let host = url.split("://").nth(1).and_then(|rest| rest.split(['.', ':', '/']).next());
            let name = names::snake(described.or(host).unwrap_or(""), "");
            let name = if name.is_empty() || name.len() > 24 { format!("server_{}", i + 1) } else { name };
            environments.push((taken.take(name), url.trim_end_matches('/').to_owned()));
        }
        let environment_choice = environments.is_empty().then(|| {
            environments.push(("local".to_owned(), "http://127.0.0.1:8080".to_owned()));
            "CHOICE environments: the document names no server URL; `local` is where \
             `payspec-sandbox --spec <this file> --port 8080` serves this spec. Write the \
             service's own base URLs here, `live: https://...`."
                .to_owned()
        });
        let (credentials, schemes) = self.credentials();
        Service { title, environments, environment_choice, credentials, schemes }
    }

    /// Each security scheme a header carries, as a credential; the others listed.
    fn credentials(&mut self) -> (Vec<Credential>, Vec<(String, String)>) {
        let mut credentials = Vec::new();
        let mut schemes = Vec::new();
        let mut taken = Taken::default();
        for word in ["none", "bearer", "account", "basic", "bearer_and_account"] {
            taken.reserve(word);
        }
        let Some(found) = self.root.pointer("/components/securitySchemes").and_then(Value::as_object) else {
            return (credentials, schemes);
        };
        for (name, scheme) in found {
            let pointer = format!("/components/securitySchemes/{}", super::text::escape(name));
            let scheme = self.schemas.resolve(scheme, &pointer);
            let kind = scheme.get("type").and_then(Value::as_str).unwrap_or("");
            let http = scheme.get("scheme").and_then(Value::as_str).unwrap_or("").to_ascii_lowercase();
            let (header, prefix, note) = match kind {
                "http" if http == "bearer" => ("Authorization".to_owned(), "Bearer ", "a bearer token"),
                "http" if http == "basic" => {
                    ("Authorization".to_owned(), "Basic ", "HTTP Basic: the base64 of `id:secret`")
                }
                "oauth2" | "openIdConnect" => {
                    ("Authorization".to_owned(), "Bearer ", "an OAuth 2 access token")
                }
                "apiKey" if scheme.get("in").and_then(Value::as_str) == Some("header") => {
                    let header = scheme.get("name").and_then(Value::as_str).unwrap_or("").to_owned();
                    if header.is_empty() {
                        self.unimported(
                            &pointer,
                            name,
                            format!("the API key scheme `{name}` names no header"),
                        );
                        continue;
                    }
                    (header, "", "an API key")
                }
                _ => {
                    let place = scheme.get("in").and_then(Value::as_str).unwrap_or(kind);
                    self.unimported(
                        &pointer,
                        name,
                        format!("the security scheme `{name}` ({kind}, {place}) does not travel in a header; operations that need it send no credential"),
                    );
                    continue;
                }
            };
            let credential = taken.take(names::field(name));
            let description = one_line(scheme.get("description").and_then(Value::as_str));
            let note = match description {
                Some(said) => format!("The `{name}` scheme, {note}: {said}"),
                None => format!("The `{name}` scheme of the document, {note}."),
            };
            schemes.push((name.clone(), credential.clone()));
            credentials.push(Credential { name: credential, header, prefix, note });
        }
        (credentials, schemes)
    }

    /// Every operation of the document, in its order, with its place.
    fn found(&mut self) -> Vec<Found<'a>> {
        const METHODS: [(&str, crate::model::Method); 5] = [
            ("get", crate::model::Method::Get),
            ("put", crate::model::Method::Put),
            ("post", crate::model::Method::Post),
            ("delete", crate::model::Method::Delete),
            ("patch", crate::model::Method::Patch),
        ];
        let mut found = Vec::new();
        let Some(paths) = self.root.get("paths").and_then(Value::as_object) else { return found };
        for (key, item) in paths {
            let pointer = format!("/paths/{}", super::text::escape(key));
            let item = self.schemas.resolve(item, &pointer);
            let Some(item_map) = item.as_object() else { continue };
            for other in item_map.keys() {
                if ["head", "options", "trace"].contains(&other.as_str()) {
                    self.unimported(
                        &format!("{pointer}/{other}"),
                        key,
                        format!(
                            "{} {key}: the spec format has no {} operations",
                            other.to_uppercase(),
                            other.to_uppercase()
                        ),
                    );
                }
            }
            for (name, method) in METHODS {
                if let Some(operation) = item.get(name) {
                    found.push(Found {
                        key: key.clone(),
                        method,
                        operation: self.schemas.resolve(operation, &pointer),
                        shared: item.get("parameters").unwrap_or(&Value::Null),
                        pointer: format!("{pointer}/{name}"),
                    });
                }
            }
        }
        found
    }

    /// The envelope the operations' answers share, said among what was inferred.
    fn envelope(&mut self, operations: &[(Found<'a>, Option<(&'a Value, String)>)]) -> Option<Envelope> {
        let answers: Vec<(&'a Value, String)> =
            operations.iter().filter_map(|(_, answer)| answer.clone()).collect();
        let envelope = infer::envelope(&answers, &mut self.schemas)?;
        let mut keys = vec![format!("data `{}`", envelope.data)];
        if !envelope.code.is_empty() {
            keys.push(format!("code `{}`", envelope.code.join("`, `")));
        }
        if !envelope.description.is_empty() {
            keys.push(format!("description `{}`", envelope.description.join("`, `")));
        }
        if let Some(flag) = &envelope.flag {
            keys.push(format!("flag `{flag}`"));
        }
        self.inferred.push(format!("an envelope most answers share: {}", keys.join(", ")));
        Some(envelope)
    }
}

/// A server's URL with its variables' defaults written in.
fn server_url(url: &str, server: &Value) -> String {
    let mut url = url.to_owned();
    if let Some(variables) = server.get("variables").and_then(Value::as_object) {
        for (name, variable) in variables {
            if let Some(default) = variable.get("default").and_then(Value::as_str) {
                url = url.replace(&format!("{{{name}}}"), default);
            }
        }
    }
    url
}
