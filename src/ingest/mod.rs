//! Files → text documents → token-sized chunks, each self-contained (it
//! starts with `path › heading`) because each chunk is encoded alone.

mod chunk;
mod walk;

pub use chunk::{chunk_document, Chunk};
pub use walk::{read_folder, Document, Skipped, MAX_FILE_BYTES};
