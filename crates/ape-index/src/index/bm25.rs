//! BM25 over chunk text with tantivy. The path is an indexed STRING field so
//! a changed file's chunks are replaced by delete-by-path then re-add, and the
//! chunk text is stored here (the manifest keeps only metadata).

use std::path::Path;

use tantivy::collector::TopDocs;
use tantivy::query::{QueryParser, TermQuery};
use tantivy::schema::{Field, IndexRecordOption, Schema, Value, INDEXED, STORED, STRING, TEXT};
use tantivy::{doc, Index, IndexReader, IndexWriter, ReloadPolicy, TantivyDocument, Term};

use super::manifest::ChunkId;
use super::IndexError;

/// The BM25 store of one folder index.
pub struct Bm25 {
    index: Index,
    reader: IndexReader,
    writer: Option<IndexWriter>,
    id: Field,
    path: Field,
    text: Field,
}

fn schema() -> (Schema, Field, Field, Field) {
    let mut b = Schema::builder();
    let id = b.add_u64_field("id", INDEXED | STORED);
    let path = b.add_text_field("path", STRING);
    let text = b.add_text_field("text", TEXT | STORED);
    (b.build(), id, path, text)
}

impl Bm25 {
    /// Opens the store in `dir`, creating it (or recreating an unreadable or
    /// foreign one: the manifest is then rebuilt too) as needed.
    pub fn open(dir: &Path) -> Result<(Self, bool), IndexError> {
        let (schema, id, path, text) = schema();
        let err = |e: tantivy::TantivyError| IndexError::Bm25(e.to_string());
        std::fs::create_dir_all(dir).map_err(|e| IndexError::io(dir, e))?;
        let existing = Index::open_in_dir(dir)
            .ok()
            .filter(|i| i.schema() == schema);
        let fresh = existing.is_none();
        let index = match existing {
            Some(i) => i,
            None => {
                std::fs::remove_dir_all(dir).map_err(|e| IndexError::io(dir, e))?;
                std::fs::create_dir_all(dir).map_err(|e| IndexError::io(dir, e))?;
                Index::create_in_dir(dir, schema).map_err(err)?
            }
        };
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()
            .map_err(err)?;
        Ok((
            Self {
                index,
                reader,
                writer: None,
                id,
                path,
                text,
            },
            fresh,
        ))
    }

    fn writer(&mut self) -> Result<&mut IndexWriter, IndexError> {
        if self.writer.is_none() {
            let w = self
                .index
                .writer_with_num_threads(1, 32 << 20)
                .map_err(|e| match e {
                    tantivy::TantivyError::LockFailure(..) => IndexError::Busy,
                    e => IndexError::Bm25(e.to_string()),
                })?;
            self.writer = Some(w);
        }
        self.writer
            .as_mut()
            .ok_or_else(|| IndexError::Bm25("no writer".into()))
    }

    /// Queues the removal of every chunk of `path`.
    pub fn delete_path(&mut self, path: &str) -> Result<(), IndexError> {
        let term = Term::from_field_text(self.path, path);
        self.writer()?.delete_term(term);
        Ok(())
    }

    /// Queues a chunk.
    pub fn add(&mut self, id: ChunkId, path: &str, text: &str) -> Result<(), IndexError> {
        let d = doc!(self.id => id, self.path => path, self.text => text);
        self.writer()?
            .add_document(d)
            .map_err(|e| IndexError::Bm25(e.to_string()))?;
        Ok(())
    }

    /// Makes queued changes durable and visible, and releases the writer
    /// lock so another process (a watcher, an `--ask`) can update next.
    pub fn commit(&mut self) -> Result<(), IndexError> {
        if let Some(mut w) = self.writer.take() {
            w.commit().map_err(|e| IndexError::Bm25(e.to_string()))?;
            w.wait_merging_threads()
                .map_err(|e| IndexError::Bm25(e.to_string()))?;
        }
        self.reader
            .reload()
            .map_err(|e| IndexError::Bm25(e.to_string()))
    }

    /// Best chunk ids for a free-text query (query syntax errors are ignored,
    /// never fatal: users type questions, not queries).
    pub fn search(&self, query: &str, k: usize) -> Result<Vec<ChunkId>, IndexError> {
        let parser = QueryParser::for_index(&self.index, vec![self.text]);
        let (q, _errors) = parser.parse_query_lenient(&sanitize(query));
        let searcher = self.reader.searcher();
        let top = searcher
            .search(&q, &TopDocs::with_limit(k.max(1)).order_by_score())
            .map_err(|e| IndexError::Bm25(e.to_string()))?;
        Ok(top
            .into_iter()
            .filter_map(|(_, addr)| searcher.doc::<TantivyDocument>(addr).ok())
            .filter_map(|d| d.get_first(self.id).and_then(|v| v.as_u64()))
            .collect())
    }

    /// The stored text of chunk `id`.
    pub fn text(&self, id: ChunkId) -> Result<Option<String>, IndexError> {
        let searcher = self.reader.searcher();
        let q = TermQuery::new(Term::from_field_u64(self.id, id), IndexRecordOption::Basic);
        let top = searcher
            .search(&q, &TopDocs::with_limit(1).order_by_score())
            .map_err(|e| IndexError::Bm25(e.to_string()))?;
        Ok(top
            .first()
            .and_then(|(_, addr)| searcher.doc::<TantivyDocument>(*addr).ok())
            .and_then(|d| {
                d.get_first(self.text)
                    .and_then(|v| v.as_str().map(str::to_string))
            }))
    }
}

/// Keeps words only: question marks, quotes and colons are query syntax.
fn sanitize(q: &str) -> String {
    q.chars()
        .map(|c| if c.is_alphanumeric() { c } else { ' ' })
        .collect()
}
