//! OpenAPI: the spec written as an OpenAPI 3.1 document ([`export`]), any OpenAPI 3.x
//! document read (`read`) into a flat view (`document`, [`ApiDocument`]) ([`read_document`]), and the two compared ([`diff`]),
//! each difference marked as recorded by one of the spec's disagreements or new.

mod diff;
mod difference;
mod document;
mod export;
mod import;
mod read;
mod refs;
mod text;

pub use diff::diff;
pub use difference::{DiffReport, Difference, DifferenceKind, Stale};
pub use document::{ApiDocument, ApiField, ApiOperation, ApiParam, DocumentError, Quirk, WireType};
pub use export::{OPENAPI_VERSION, export, export_json};
pub use import::{Draft, Unimported, import};
pub use read::{MAX_DOCUMENT_BYTES, read_document};
