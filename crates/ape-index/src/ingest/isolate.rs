//! The heavier formats read in a worker process, so that one file cannot
//! take the indexer down. PDF, Office and EPUB readers parse compressed,
//! attacker-shaped structures with libraries that can allocate without
//! bound or loop for minutes; an out-of-memory abort is not a panic, so
//! `catch_unwind` cannot stop it, and a first pass that died on a file
//! would die on it again at every start. In a worker (this binary, run as
//! `ape-chat __extract-worker`) a file that needs more than the memory cap
//! or the time cap ends only the worker: the file is skipped with the
//! reason and the pass goes on. Text, Markdown, HTML, CSV and the like are
//! read here: their readers are linear in the file, which the walk already
//! caps in size.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::extract::{extract, kind, Extracted, Kind};
use super::place::{Section, Unit};

/// The argument that makes the binary a worker (never shown in help).
pub const WORKER_ARG: &str = "__extract-worker";

/// Where files of the heavier formats are read.
#[derive(Clone, Debug, Default)]
pub enum Extraction {
    /// In this process (library tests; the readers' own caps, such as
    /// the PDF inflation cap, still hold).
    #[default]
    InProcess,
    /// In a child process running `exe`, under the caps.
    Worker {
        exe: PathBuf,
        /// Bytes of memory the worker may allocate.
        memory: u64,
        timeout: Duration,
    },
}

impl Extraction {
    /// A worker running this very executable, with these caps; in
    /// process when the executable cannot be found.
    pub fn worker_with(memory: u64, timeout: Duration) -> Self {
        match std::env::current_exe() {
            Ok(exe) => Self::Worker {
                exe,
                memory,
                timeout,
            },
            Err(_) => Self::InProcess,
        }
    }

    /// The text of the file at `path` (whose bytes are `bytes`), read here
    /// or in a worker; `Err` says why it cannot be used.
    pub fn extract(&self, path: &Path, bytes: &[u8]) -> Result<Extracted, String> {
        match self {
            Self::Worker {
                exe,
                memory,
                timeout,
            } if isolated(kind(path)) => in_worker(exe, *memory, *timeout, path, bytes),
            _ => extract(path, bytes),
        }
    }
}

/// Formats whose readers inflate or parse nested binary structures.
fn isolated(kind: Option<Kind>) -> bool {
    matches!(
        kind,
        Some(
            Kind::Pdf
                | Kind::Docx
                | Kind::Odt
                | Kind::Pptx
                | Kind::Odp
                | Kind::Xlsx
                | Kind::Ods
                | Kind::Xls
                | Kind::Epub
        )
    )
}

/// What a worker writes on stdout: the text, or why there is none.
#[derive(Serialize, Deserialize)]
enum Reply {
    Text {
        text: String,
        sections: Vec<WireSection>,
        note: Option<String>,
    },
    Unreadable(String),
}

/// A [`Section`] on the wire (names are shared again on arrival).
#[derive(Serialize, Deserialize)]
struct WireSection {
    line: usize,
    unit: Unit,
    number: usize,
    name: Option<String>,
    row: Option<usize>,
}

fn in_worker(
    exe: &Path,
    memory: u64,
    timeout: Duration,
    path: &Path,
    bytes: &[u8],
) -> Result<Extracted, String> {
    // The worker sees only the name, for its extension.
    let name = path.file_name().unwrap_or(path.as_os_str());
    let spawned = Command::new(exe)
        .arg(WORKER_ARG)
        .arg(memory.to_string())
        .arg(name)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match spawned {
        Ok(c) => c,
        // The executable is gone (replaced by an upgrade): read it here,
        // under the readers' own caps, rather than not at all.
        Err(_) => return extract(path, bytes),
    };
    let (Some(mut stdin), Some(mut stdout), Some(mut stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        let _ = child.kill();
        let _ = child.wait();
        return Err("the reader process could not be started".into());
    };
    let out = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = stdout.read_to_end(&mut b);
        b
    });
    let err = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = (&mut stderr).take(4096).read_to_end(&mut b);
        // Drain the rest so the worker never blocks on a full pipe.
        let _ = std::io::copy(&mut stderr, &mut std::io::sink());
        b
    });
    // A worker that dies mid-read closes the pipe: the write just fails.
    let _ = stdin.write_all(bytes);
    drop(stdin);
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break Some(s),
            Ok(None) if started.elapsed() >= timeout => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(2)),
            Err(_) => break None,
        }
    };
    let out = out.join().unwrap_or_default();
    let err = String::from_utf8_lossy(&err.join().unwrap_or_default()).into_owned();
    let Some(status) = status else {
        return Err(format!(
            "reading it took longer than {} s: stopped",
            timeout.as_secs_f64()
        ));
    };
    if !status.success() {
        let oom = err.contains("memory allocation") || err.contains("out of memory");
        return Err(if oom {
            format!(
                "reading it needed more than {} of memory: stopped",
                crate::engine::memory::gb(memory)
            )
        } else {
            use std::os::unix::process::ExitStatusExt;
            let how = match status.signal() {
                Some(sig) => format!("signal {sig}"),
                None => format!("exit code {}", status.code().unwrap_or(-1)),
            };
            format!("the reader failed on it ({how})")
        });
    }
    match serde_json::from_slice::<Reply>(&out) {
        Ok(Reply::Text {
            text,
            sections,
            note,
        }) => Ok(Extracted {
            text,
            sections: share_names(sections),
            note,
        }),
        Ok(Reply::Unreadable(reason)) => Err(reason),
        Err(e) => Err(format!("the reader's reply was unreadable: {e}")),
    }
}

/// Sections as the readers make them: rows of one sheet share its name.
fn share_names(sections: Vec<WireSection>) -> Vec<Section> {
    let mut last: Option<Arc<str>> = None;
    sections
        .into_iter()
        .map(|s| {
            let name = s.name.map(|n| match &last {
                Some(l) if **l == *n => Arc::clone(l),
                _ => {
                    let a: Arc<str> = Arc::from(n);
                    last = Some(Arc::clone(&a));
                    a
                }
            });
            Section {
                line: s.line,
                unit: s.unit,
                number: s.number,
                name,
                row: s.row,
            }
        })
        .collect()
}

/// The worker's side, when the binary was started as one: caps its own
/// memory, reads the file's bytes from stdin, writes a [`Reply`] on stdout.
/// `None` when this process is not a worker.
pub fn worker_if_asked() -> Option<ExitCode> {
    let mut args = std::env::args_os().skip(1);
    if args.next()? != WORKER_ARG {
        return None;
    }
    let memory: Option<u64> = args.next().and_then(|m| m.to_str()?.parse().ok());
    let (Some(memory), Some(name)) = (memory, args.next()) else {
        eprintln!("usage: ape-chat {WORKER_ARG} MEMORY_BYTES FILE_NAME < bytes");
        return Some(ExitCode::from(2));
    };
    crate::rlimit::cap_address_space(memory);
    let mut bytes = Vec::new();
    if let Err(e) = std::io::stdin().read_to_end(&mut bytes) {
        eprintln!("reading stdin: {e}");
        return Some(ExitCode::FAILURE);
    }
    let reply = match extract(Path::new(&name), &bytes) {
        Ok(x) => Reply::Text {
            text: x.text,
            sections: x
                .sections
                .into_iter()
                .map(|s| WireSection {
                    line: s.line,
                    unit: s.unit,
                    number: s.number,
                    name: s.name.map(|n| n.to_string()),
                    row: s.row,
                })
                .collect(),
            note: x.note,
        },
        Err(reason) => Reply::Unreadable(reason),
    };
    let written = serde_json::to_writer(std::io::stdout().lock(), &reply);
    Some(if written.is_ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_heavier_formats_leave_the_process() {
        for (name, leaves) in [
            ("a.pdf", true),
            ("a.docx", true),
            ("a.xlsx", true),
            ("a.epub", true),
            ("a.md", false),
            ("a.html", false),
            ("a.csv", false),
            ("a.eml", false),
        ] {
            assert_eq!(isolated(kind(Path::new(name))), leaves, "{name}");
        }
    }

    #[test]
    fn sheet_rows_share_their_name_again() {
        let row = |line, name: &str| WireSection {
            line,
            unit: Unit::Sheet,
            number: 1,
            name: Some(name.into()),
            row: Some(line),
        };
        let s = share_names(vec![row(1, "Staff"), row(2, "Staff"), row(3, "Rota")]);
        let names: Vec<&Arc<str>> = s.iter().filter_map(|s| s.name.as_ref()).collect();
        assert!(Arc::ptr_eq(names[0], names[1]));
        assert_eq!(names[2].as_ref(), "Rota");
    }
}
