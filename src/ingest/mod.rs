//! Files → text documents → token-sized chunks, each self-contained (it
//! starts with `path › heading`) because each chunk is encoded alone.

mod chunk;
mod docx;
pub mod extract;
mod html;
mod walk;

pub use chunk::{chunk_document, Chunk, Document};
pub use walk::{walk, FileEntry, Filters, Skipped, MAX_FILE_BYTES};
