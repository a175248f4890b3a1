//! OpenAPI: the spec written as an OpenAPI 3.1 document ([`export`]), any OpenAPI 3.x
//! document read into a flat view ([`read_document`]), and the two compared ([`diff`]),
//! each difference marked as recorded by one of the spec's disagreements or new.

mod diff;
mod export;
mod read;

pub use diff::{DiffReport, Difference, DifferenceKind, Stale, diff};
pub use export::{OPENAPI_VERSION, export, export_json};
pub use read::{
    ApiDocument, ApiField, ApiOperation, ApiParam, DocumentError, MAX_DOCUMENT_BYTES, Quirk, WireType,
    read_document,
};
