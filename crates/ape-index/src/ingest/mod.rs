//! Files → text documents → token-sized chunks, each self-contained (it
//! starts with `path › heading`) because each chunk is encoded alone.

mod chunk;
mod container;
pub mod documents;
mod docx;
mod epub;
pub mod extract;
mod extracted;
mod html;
pub mod isolate;
mod mail;
mod notebook;
mod office;
pub(crate) mod pdf;
pub mod place;
mod sheet;
mod walk;
mod xml;

pub use chunk::{chunk_document, Chunk, Document};
pub use isolate::Extraction;
pub use place::{Place, Unit};
pub use walk::{directories, walk, FileEntry, Filters, Skipped, MAX_FILE_BYTES};
